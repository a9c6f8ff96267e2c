import { type FSWatcher, fstatSync, statSync, watch } from "node:fs";
import { type FileHandle, open, readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Logger } from "pino";
import type { Checkpoint } from "./checkpoint-file.ts";
import { AgentError } from "./errors.ts";
import type { LineSource, SourceEvent } from "./line-source.ts";
import type { ReadBuffers } from "./read-buffers.ts";
import { hasFingerprint, laterGenerationBytes, nextGeneration } from "./rotated-generation.ts";
import { FINGERPRINT_BYTES, SourceFile } from "./source-file.ts";

interface OpenFile {
  handle: FileHandle;
  file: SourceFile;
  position: number;
}

export interface TailFileOptions {
  /** How long a rotated file is still read while the new file at the path stays empty (the writer may lag). */
  rotateGraceMs: number;
  log: Logger;
  /** Where reads go; a data event's bytes stay valid until the agent releases them (Kafka acknowledged them). */
  buffers: ReadBuffers;
  /**
   * Called when the file system reports a change to the path (inotify through `fs.watch` on its directory: a write,
   * a rename, a create), so an idle reader reads at once instead of at its next poll. Without it, or where the file
   * system reports nothing (some network file systems), the poll alone finds new lines.
   */
  onChange?: () => void;
}

/**
 * Watches the directory of `path` (the file itself may be renamed away or not exist yet) and calls `onChange` for
 * events on its name. A watch that cannot start or fails later is logged and dropped: polling goes on.
 */
function watchPath(path: string, onChange: () => void, log: Logger): FSWatcher | undefined {
  const name = basename(path);
  try {
    const watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      if (changed === null || changed === name) onChange();
    });
    watcher.on("error", (error) => {
      log.warn({ err: error, source: path }, "file watch failed; new lines are found by polling");
      watcher.close();
    });
    return watcher;
  } catch (error) {
    log.warn({ err: error, source: path }, "file watch not available; new lines are found by polling");
    return undefined;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function unreadable(path: string, cause: unknown): AgentError {
  return new AgentError("AGENT_SOURCE_UNREADABLE", `cannot read ${path}: ${(cause as Error).message}`, {
    subject: path,
    cause,
  });
}

/** Opens `path` to read from `position`; `name` is the configured path the file is (or was) known by. */
async function openAt(path: string, position: number, name = path): Promise<OpenFile | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (cause) {
    if (isMissing(cause)) return undefined;
    throw unreadable(path, cause);
  }
  const info = await handle.stat();
  const head = Buffer.alloc(Math.min(position, FINGERPRINT_BYTES));
  if (head.length > 0) await handle.read(head, 0, head.length, 0);
  return { handle, file: new SourceFile(name, info.dev, info.ino, head, info.mtimeMs), position };
}

/**
 * Whether the file at `path` is the checkpoint's file: same device and inode, same leading bytes, long enough.
 * `info`: the path's stat when the caller has it (undefined: gone).
 */
async function matches(
  path: string,
  checkpoint: Checkpoint,
  info: { dev: number; ino: number; size: number } | undefined,
): Promise<boolean> {
  if (!info || info.dev !== checkpoint.dev || info.ino !== checkpoint.ino || info.size < checkpoint.offset)
    return false;
  return hasFingerprint(path, checkpoint.fingerprint);
}

/**
 * Where to resume: the path itself when it is still the checkpoint's file; else a rotated sibling
 * (`<name>.1`, `<name>-20261123`, ...) to be finished first; else the start of the path.
 */
async function resumeFrom(
  path: string,
  checkpoint: Checkpoint | undefined,
  log: Logger,
): Promise<OpenFile | undefined> {
  if (checkpoint === undefined) return openAt(path, 0);
  const atPath = await stat(path).catch(() => undefined);
  if (await matches(path, checkpoint, atPath)) return openAt(path, checkpoint.offset);
  const name = basename(path);
  const directory = dirname(path);
  const siblings = await readdir(directory).catch(() => [] as string[]);
  for (const sibling of siblings) {
    if (sibling === name || !sibling.startsWith(name)) continue;
    const candidate = join(directory, sibling);
    if (await matches(candidate, checkpoint, await stat(candidate).catch(() => undefined))) {
      log.info({ file: candidate, offset: checkpoint.offset }, "resuming in the rotated file first");
      return openAt(candidate, checkpoint.offset, path);
    }
  }
  const { dev, ino, offset, mtimeMs } = checkpoint;
  // The file is gone (deleted, or compressed by the rotation): the generations rotated away after it are read before
  // the path. Not when the path is still its inode (truncated: copytruncate's copies hold what was read already).
  // A checkpoint written before the file's time was kept (no `mtimeMs`) bounds nothing: the path, as before.
  const truncated = atPath !== undefined && atPath.dev === dev && atPath.ino === ino;
  if (!truncated && mtimeMs !== undefined) {
    const generation = await nextGeneration(path, { dev, ino, mtimeMs }, checkpoint.fingerprint);
    if (generation) {
      log.warn(
        { checkpoint: { dev, ino, offset }, file: generation },
        "the checkpoint's file is gone (its unread rest is lost); reading the generations rotated after it first",
      );
      return openAt(generation, 0, path);
    }
  }
  log.warn(
    { checkpoint: { dev, ino, offset } },
    "the checkpoint's file is gone (or was truncated); starting at the beginning of the path",
  );
  return openAt(path, 0);
}

/**
 * A copy of the current file's generation made by copytruncate: another inode in the same directory whose name
 * starts with the path's, at least `position` bytes long, with the same leading bytes.
 */
async function findCopy(path: string, file: SourceFile, position: number): Promise<string | undefined> {
  const name = basename(path);
  const directory = dirname(path);
  const fingerprint = file.fingerprint(position);
  const siblings = await readdir(directory).catch(() => [] as string[]);
  for (const sibling of siblings) {
    if (sibling === name || !sibling.startsWith(name)) continue;
    const candidate = join(directory, sibling);
    const info = await stat(candidate).catch(() => undefined);
    if (!info?.isFile() || (info.dev === file.dev && info.ino === file.ino) || info.size < position) continue;
    if (await hasFingerprint(candidate, fingerprint)) return candidate;
  }
  return undefined;
}

/**
 * Tails one path by polling: reads to the end, then notices a truncation (copytruncate), a rename + create or a
 * delete + recreate. On a rename the old file is kept open and read to its end before the new one is opened; while
 * the new file is still empty, the old one is read for `rotateGraceMs` more (the writer may not have reopened yet).
 * A truncation is noticed by size at the file's end, or by changed leading bytes after every read (so a writer that
 * refilled the file past the read position is noticed before its bytes are taken for the old ones); the rest of the
 * old generation is then read from its copy when one is found beside the path, before the truncated file is read
 * from its start. A renamed or deleted file, or a copy, read to its end is followed by the generations rotated away
 * after it (`nextGeneration`: two rotations while it was being finished, or while the agent was stopped), oldest
 * first, and then by the path.
 */
export class TailFile implements LineSource {
  readonly name: string;
  readonly #options: TailFileOptions;
  #current: OpenFile | undefined;
  #rotatedSince: number | undefined;
  /** The current file is a copytruncate copy: at its end, the path is read from 0. */
  #readingCopy = false;
  /** The file's leading bytes as read again by `#sameGeneration` (after every read: not allocated each time). */
  readonly #headScratch = Buffer.allocUnsafeSlow(FINGERPRINT_BYTES);

  /** The directory watch behind `onChange` (undefined without one, or once it failed). */
  #watcher: FSWatcher | undefined;

  private constructor(path: string, current: OpenFile | undefined, options: TailFileOptions) {
    this.name = path;
    this.#current = current;
    this.#options = options;
    const { onChange } = options;
    if (onChange) this.#watcher = watchPath(path, onChange, options.log);
  }

  static async open(path: string, checkpoint: Checkpoint | undefined, options: TailFileOptions): Promise<TailFile> {
    return new TailFile(path, await resumeFrom(path, checkpoint, options.log), options);
  }

  /**
   * The current file's bytes past the read position; when it is no longer the file at the path (rotated away, or a
   * copytruncate copy), also the generations rotated after it and the file at the path: all still to be read.
   */
  bytesUnread(): number {
    const current = this.#current;
    if (!current) return 0;
    try {
      const own = fstatSync(current.handle.fd);
      const unread = Math.max(0, own.size - current.position);
      const atPath = statSync(this.name, { throwIfNoEntry: false });
      if (atPath !== undefined && atPath.dev === own.dev && atPath.ino === own.ino) return unread;
      return unread + laterGenerationBytes(this.name, own, this.#readingCopy) + (atPath?.size ?? 0);
    } catch {
      return 0;
    }
  }

  async next(maxBytes: number): Promise<SourceEvent> {
    if (!this.#current) {
      this.#current = await openAt(this.name, 0);
      if (!this.#current) return { kind: "idle" };
    }
    const current = this.#current;
    const room = this.#options.buffers.room(maxBytes);
    let bytesRead: number;
    try {
      ({ bytesRead } = await current.handle.read(room, 0, room.length, current.position));
    } catch (cause) {
      throw unreadable(this.name, cause);
    }
    if (bytesRead > 0 && !this.#readingCopy && !(await this.#sameGeneration(current))) {
      // The file was truncated and refilled past our position since the last check: what was just read belongs to
      // the new generation. Dropped unread; the truncation is handled now, from the position before this read, so
      // the old generation's rest still comes from its copy (nothing skipped, nothing of the new one read twice).
      const truncated = await this.#checkTruncated(current);
      if (truncated) return truncated;
    }
    if (bytesRead > 0) {
      // Not copied: the lines are views of the read buffer, which is reused once Kafka acknowledged them.
      this.#options.buffers.filled(bytesRead);
      const data = room.subarray(0, bytesRead);
      const start = current.position;
      current.position += bytesRead;
      current.file.noteRead(start, data);
      return { kind: "data", file: current.file, start, bytes: data };
    }
    if (this.#readingCopy) return this.#switchTo(current, "copytruncate");
    return this.#atEnd(current);
  }

  /**
   * Whether the file still starts with the bytes this generation started with, checked after every read: a writer
   * that truncated and refilled the file past our position must not have its new bytes read as the old file's rest.
   */
  async #sameGeneration(current: OpenFile): Promise<boolean> {
    const expected = current.file.head(current.position);
    if (expected.length === 0) return true;
    const head = this.#headScratch.subarray(0, expected.length);
    const { bytesRead } = await current.handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(expected);
  }

  /** A truncation of the current file (smaller than the read position, or other leading bytes), or undefined. */
  async #checkTruncated(current: OpenFile): Promise<SourceEvent | undefined> {
    const own = await current.handle.stat();
    const truncated = own.size < current.position || !(await this.#sameGeneration(current));
    if (!truncated) return undefined;
    const lostFrom = current.position;
    const copy = await findCopy(this.name, current.file, current.position);
    if (copy) {
      const opened = await openAt(copy, current.position, this.name);
      if (opened) {
        await current.handle.close();
        this.#current = opened;
        this.#readingCopy = true;
        return { kind: "copied", from: current.file, to: opened.file, copy, position: lostFrom };
      }
    }
    current.file = new SourceFile(this.name, own.dev, own.ino, undefined, own.mtimeMs);
    current.position = 0;
    this.#rotatedSince = undefined;
    return { kind: "truncated", file: current.file, lostFrom };
  }

  async #atEnd(current: OpenFile): Promise<SourceEvent> {
    const truncated = await this.#checkTruncated(current);
    if (truncated) return truncated;
    let atPath: Awaited<ReturnType<typeof stat>>;
    try {
      atPath = await stat(this.name);
    } catch (cause) {
      if (isMissing(cause)) return { kind: "idle" };
      throw unreadable(this.name, cause);
    }
    // Stat the old file after the path: what the writer wrote to it before moving to the new file shows here.
    const own = await current.handle.stat();
    if (atPath.dev === own.dev && atPath.ino === own.ino) {
      this.#rotatedSince = undefined;
      return { kind: "idle" };
    }
    if (own.size > current.position) return { kind: "idle" };
    const stillLinked = own.nlink > 0;
    if (stillLinked && atPath.size === 0) {
      this.#rotatedSince ??= Date.now();
      if (Date.now() - this.#rotatedSince < this.#options.rotateGraceMs) return { kind: "idle" };
    }
    return this.#switchTo(current, stillLinked ? "rename" : "recreate");
  }

  /**
   * Closes the current file (read to its end) and opens the next one from its start: a generation rotated away after
   * it, else the path. After a copytruncate copy, such a generation is the copy of the generation the path held
   * meanwhile (copytruncate ran again while the copy was read: the copy renamed to `.2`, the next one at `.1`), read
   * as a copy too; without one, the truncated file at the path is the copy's next generation. A later copy was
   * written after this one (nothing writes to a copy after it is made): an older copy, already read, whose name
   * sorts after it (copies named by hand, `.1` then `.2`) is not taken for it.
   */
  async #switchTo(current: OpenFile, reason: "rename" | "recreate" | "copytruncate"): Promise<SourceEvent> {
    const own = await current.handle.stat();
    const generation = await nextGeneration(
      this.name,
      own,
      current.file.fingerprint(current.position),
      reason === "copytruncate",
    );
    const next = generation ? await openAt(generation, 0, this.name) : await openAt(this.name, 0);
    if (!next) return { kind: "idle" };
    await current.handle.close();
    this.#current = next;
    this.#rotatedSince = undefined;
    this.#readingCopy = reason === "copytruncate" && generation !== undefined;
    const event = { kind: "switched", from: current.file, to: next.file, reason, endOfOld: current.position } as const;
    return generation ? { ...event, generation } : event;
  }

  async close(): Promise<void> {
    this.#watcher?.close();
    this.#watcher = undefined;
    await this.#current?.handle.close();
    this.#current = undefined;
  }
}
