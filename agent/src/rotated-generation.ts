import { createHash } from "node:crypto";
import { open, readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Fingerprint } from "./source-file.ts";

// Rotated generations of a tailed path (agent/README.md, "Rotation"): which one to read after the file just finished.

/**
 * A rotated generation's name after the path's own: a separator, then digits and separators only (`.1`,
 * `-20261123`, `.2026-11-23_10`, `-2026-11-23T10:00`). Not a compressed generation (`.2.gz`: its bytes are not
 * lines), nor the agent's checkpoint or a temporary file beside the log.
 */
const GENERATION_SUFFIX = /^[._-]\d[\d._:T-]*$/;
/** A numbered generation (logrotate's `.1`, `.12`): a count, not a date (`-20261123`, `.261123` are dates). */
const NUMBERED_SUFFIX = /^\.(\d{1,4})$/;

interface Generation {
  /** The name after the path's own (`.1`); undefined for a file no longer linked (deleted, or gone at a restart). */
  readonly name: string | undefined;
  readonly mtimeMs: number;
}

/**
 * Negative when `a` was rotated away before `b`. The names decide when both are of one scheme, as the rotating tool
 * named them: numbered, the higher first (`.2` before `.1`); dated, ascending (logrotate's `dateformat` must sort in
 * time). Otherwise (a file no longer linked, two schemes) the earlier last write first, a file no longer linked
 * before the files of its time.
 */
function generationOrder(a: Generation, b: Generation): number {
  if (a.name !== undefined && b.name !== undefined) {
    const numberA = NUMBERED_SUFFIX.exec(a.name)?.[1];
    const numberB = NUMBERED_SUFFIX.exec(b.name)?.[1];
    if (numberA !== undefined && numberB !== undefined) return Number(numberB) - Number(numberA);
    if (numberA === undefined && numberB === undefined && a.name !== b.name) return a.name < b.name ? -1 : 1;
  }
  if (a.mtimeMs !== b.mtimeMs) return a.mtimeMs - b.mtimeMs;
  if (a.name === undefined || b.name === undefined) return a.name === b.name ? 0 : a.name === undefined ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

async function leadingBytes(path: string, length: number): Promise<Buffer | undefined> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return undefined;
  try {
    const bytes = Buffer.alloc(length);
    const { bytesRead } = await handle.read(bytes, 0, length, 0);
    return bytesRead === length ? bytes : undefined;
  } finally {
    await handle.close();
  }
}

/** Whether the file at `path` starts with `head`: a copy of the generation `head` was read from. */
export async function startsWith(path: string, head: Buffer): Promise<boolean> {
  if (head.length === 0) return false;
  return (await leadingBytes(path, head.length))?.equals(head) ?? false;
}

/** Whether the file at `path` starts with the bytes `fingerprint` hashes (a checkpoint's file, or a copy of it). */
export async function hasFingerprint(path: string, fingerprint: Fingerprint): Promise<boolean> {
  if (fingerprint.length === 0) return false;
  const head = await leadingBytes(path, fingerprint.length);
  return head !== undefined && createHash("sha256").update(head).digest("hex") === fingerprint.sha256;
}

/**
 * The oldest generation rotated away after the file `own` (read to its end, or a checkpoint's file that is gone)
 * and before the file now at `path`: the writer rotated more than once while `own` was being finished, or while the
 * agent was stopped. Candidates are the path's siblings named as rotated generations (`GENERATION_SUFFIX`), not
 * empty, not `own` itself nor a copy of it (`isCopy`), later than `own` by `generationOrder` (its own name found by
 * its inode). Undefined when there is none: the path is next.
 */
export async function nextGeneration(
  path: string,
  own: { dev: number; ino: number; mtimeMs: number },
  isCopy: (candidate: string) => Promise<boolean>,
): Promise<string | undefined> {
  const base = basename(path);
  const directory = dirname(path);
  const found: (Generation & { name: string })[] = [];
  let ownName: string | undefined;
  for (const sibling of await readdir(directory).catch(() => [] as string[])) {
    if (sibling === base || !sibling.startsWith(base) || !GENERATION_SUFFIX.test(sibling.slice(base.length))) continue;
    const info = await stat(join(directory, sibling)).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (info.dev === own.dev && info.ino === own.ino) {
      ownName = sibling.slice(base.length);
      continue;
    }
    if (info.size > 0) found.push({ name: sibling.slice(base.length), mtimeMs: info.mtimeMs });
  }
  const self: Generation = { name: ownName, mtimeMs: own.mtimeMs };
  const later = found.filter((g) => generationOrder(self, g) < 0).sort(generationOrder);
  for (const generation of later) {
    const candidate = join(directory, base + generation.name);
    if (!(await isCopy(candidate))) return candidate;
  }
  return undefined;
}
