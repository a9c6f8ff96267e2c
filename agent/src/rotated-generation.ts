import { readdirSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type Fingerprint, fingerprintOf } from "./source-file.ts";

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

/**
 * Whether the file at `path` starts with the bytes `fingerprint` hashes: a checkpoint's file, or a copy of the
 * generation the fingerprint was taken from. False when it cannot be read or is shorter.
 */
export async function hasFingerprint(path: string, fingerprint: Fingerprint): Promise<boolean> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return false;
  try {
    const head = Buffer.alloc(fingerprint.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && fingerprintOf(head).sha256 === fingerprint.sha256;
  } finally {
    await handle.close();
  }
}

/** A sibling of the path named as a rotated generation (`name`: after the path's own), with what `stat` said. */
interface Sibling extends Generation {
  readonly name: string;
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
}

type FileIdentity = { dev: number; ino: number; mtimeMs: number };

function isGenerationName(base: string, sibling: string): boolean {
  return sibling !== base && sibling.startsWith(base) && GENERATION_SUFFIX.test(sibling.slice(base.length));
}

/**
 * The siblings rotated away after `own` and not empty, oldest first (`own`'s name found among them by inode). After a
 * copytruncate copy (`copy`), only those also last written no earlier than it: nothing writes to a copy after it is
 * made, so an older copy (already read) whose name sorts after it (copies named by hand, `.1` then `.2`) is not one.
 */
function laterThan(own: FileIdentity, siblings: readonly Sibling[], copy: boolean): Sibling[] {
  const named = siblings.find((sibling) => sibling.dev === own.dev && sibling.ino === own.ino);
  const self: Generation = { name: named?.name, mtimeMs: own.mtimeMs };
  return siblings
    .filter((sibling) => sibling !== named && sibling.size > 0 && generationOrder(self, sibling) < 0)
    .filter((sibling) => !copy || sibling.mtimeMs >= own.mtimeMs)
    .sort(generationOrder);
}

/**
 * The path's siblings named as rotated generations, with their `stat`. Synchronous: a directory listing, read at a
 * switch between files and at a metrics scrape, both rare.
 */
function siblingsOf(path: string): Sibling[] {
  const base = basename(path);
  const directory = dirname(path);
  const siblings: Sibling[] = [];
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return siblings;
  }
  for (const sibling of names) {
    if (!isGenerationName(base, sibling)) continue;
    const info = statSync(join(directory, sibling), { throwIfNoEntry: false });
    if (info?.isFile()) siblings.push({ name: sibling.slice(base.length), ...pick(info) });
  }
  return siblings;
}

const pick = (info: { dev: number; ino: number; size: number; mtimeMs: number }) => ({
  dev: info.dev,
  ino: info.ino,
  size: info.size,
  mtimeMs: info.mtimeMs,
});

/**
 * The oldest generation rotated away after the file `own` (read to its end, or a checkpoint's file that is gone)
 * and before the file now at `path`: the writer rotated more than once while `own` was being finished, or while the
 * agent was stopped. Candidates are the path's siblings named as rotated generations (`GENERATION_SUFFIX`), not
 * empty, not `own` itself nor a copy of it (starting with the bytes `fingerprint` hashes), later than `own` by `generationOrder` (its own name found by
 * its inode), after a copy (`copy`) last written no earlier than it. Undefined when there is none: the path is next.
 */
export async function nextGeneration(
  path: string,
  own: FileIdentity,
  fingerprint: Fingerprint,
  copy = false,
): Promise<string | undefined> {
  for (const generation of laterThan(own, siblingsOf(path), copy)) {
    const candidate = join(dirname(path), basename(path) + generation.name);
    // Nothing read yet (an empty fingerprint): no copy to tell apart.
    if (fingerprint.length === 0 || !(await hasFingerprint(candidate, fingerprint))) return candidate;
  }
  return undefined;
}

/**
 * Bytes waiting in the generations rotated away after `own` (what `nextGeneration` would read next, copies not told
 * apart), synchronously, for a metrics scrape.
 */
export function laterGenerationBytes(path: string, own: FileIdentity, copy = false): number {
  return laterThan(own, siblingsOf(path), copy).reduce((sum, generation) => sum + generation.size, 0);
}
