import { AuditApiError } from "./errors.ts";

const decoder = new TextDecoder("utf-8", { fatal: false });
/** `{"id":"` */
const ID_PREFIX = [0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22];

/**
 * Whether `line` is a JSON object whose first member is `"id"` with `id` as the writer encodes it
 * (`{"id":"…",…}`): the check without parsing the line, for the writer's lines (id first). Anything else falls back
 * to a parse (`checkLineId`).
 */
function startsWithId(line: Uint8Array, id: string): boolean {
  // `{"id":"` + the id's characters (plain ASCII without `"` or `\\` only: else the fallback) + `"`
  const n = 7 + id.length;
  if (line.length <= n + 1 || line[line.length - 1] !== 0x7d) return false;
  for (let i = 0; i < 7; i++) if (line[i] !== ID_PREFIX[i]) return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c || line[7 + i] !== c) return false;
  }
  const after = line[n + 1];
  return line[n] === 0x22 && (after === 0x2c || after === 0x7d);
}

/** Where a checked line was read from, for the error (`bytes` is a description of its range). */
export interface LineSource {
  key: string;
  versionId: string;
  bytes: string;
}

/** Checks a stored line by parsing it: `AUDIT_API_OBJECT_READ_FAILED` when it is not JSON or not an object with `id`. */
function parseLine(line: Uint8Array, id: string, source: LineSource): void {
  let record: unknown;
  try {
    record = JSON.parse(decoder.decode(line));
  } catch (error) {
    throw new AuditApiError("AUDIT_API_OBJECT_READ_FAILED", `${source.key}: event ${id} is not JSON`, {
      subject: source.key,
      cause: error,
    });
  }
  if (typeof record !== "object" || record === null || (record as Record<string, unknown>).id !== id) {
    throw new AuditApiError(
      "AUDIT_API_OBJECT_READ_FAILED",
      `${source.key} (version ${source.versionId}) bytes ${source.bytes} do not hold event ${id}`,
      { subject: source.key },
    );
  }
}

/**
 * Checks that `line` (no newline) holds the event `id` the index names (`parseLine`'s errors), parsing only when the
 * cheap check fails. `source` is asked for only then: a page checks 100 lines per call, and describing each line's
 * range up front cost more than the check.
 */
export function checkLineId(line: Uint8Array, id: string, source: () => LineSource): void {
  if (!startsWithId(line, id)) parseLine(line, id, source());
}
