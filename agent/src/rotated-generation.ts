import { open, readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

// Rotated generations of a tailed path (agent/README.md, "Rotation"): which one to read after the file just finished.

/**
 * A rotated generation's name after the path's own: a separator, then digits and separators only (`.1`,
 * `-20261123`, `.2026-11-23_10`, `-2026-11-23T10:00`). Not a compressed generation (`.2.gz`: its bytes are not
 * lines), nor the agent's checkpoint or a temporary file beside the log.
 */
const GENERATION_SUFFIX = /^[._-]\d[\d._:T-]*$/;
/** A numbered generation (`.1`, `.12`): a count, not a date (`-20261123` has 8 digits). */
const NUMBERED_SUFFIX = /^[._-](\d{1,6})$/;

interface Generation {
  /** The file's name in the directory; undefined for a file no longer linked (deleted while read). */
  readonly name: string | undefined;
  readonly mtimeMs: number;
}

/**
 * Negative when `a` was rotated away before `b`: the earlier last write first; on equal times (a coarse clock),
 * numbered generations by number, higher first (`.2` before `.1`), others by name (dates ascending). A file no longer
 * linked sorts before the files of its time.
 */
function generationOrder(a: Generation, b: Generation): number {
  if (a.mtimeMs !== b.mtimeMs) return a.mtimeMs - b.mtimeMs;
  if (a.name === undefined || b.name === undefined) return a.name === b.name ? 0 : a.name === undefined ? -1 : 1;
  const numberA = NUMBERED_SUFFIX.exec(a.name)?.[1];
  const numberB = NUMBERED_SUFFIX.exec(b.name)?.[1];
  if (numberA !== undefined && numberB !== undefined) return Number(numberB) - Number(numberA);
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Whether the file at `path` starts with `head` (a copy of the generation it was read from). */
async function startsWith(path: string, head: Buffer): Promise<boolean> {
  if (head.length === 0) return false;
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return false;
  try {
    const bytes = Buffer.alloc(head.length);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
    return bytesRead === bytes.length && bytes.equals(head);
  } finally {
    await handle.close();
  }
}

/**
 * The oldest generation rotated away after the file `own` (read to its end; `head`: its leading bytes) and before
 * the file now at `path`: the writer rotated more than once while `own` was being finished, or while the agent was
 * stopped. Candidates are the path's siblings named as rotated generations (`GENERATION_SUFFIX`), not empty, not
 * `own` itself nor a copy of it, later than `own` by `generationOrder` (its own name found by its inode). Undefined
 * when there is none: the path is next.
 */
export async function nextGeneration(
  path: string,
  own: { dev: number; ino: number; mtimeMs: number },
  head: Buffer,
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
    if (!(await startsWith(candidate, head))) return candidate;
  }
  return undefined;
}
