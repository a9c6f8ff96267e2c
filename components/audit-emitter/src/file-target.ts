import { type FileHandle, open, rename, stat } from "node:fs/promises";
import { AuditEmitterError } from "./errors.ts";
import type { SinkTarget } from "./sink-target.ts";

/** Mode of a log file the emitter creates: owner read-write, group read (the agent's group), nothing for others. */
export const AUDIT_FILE_MODE = 0o640;

interface OpenFile {
  handle: FileHandle;
  dev: number;
  ino: number;
  /** A write failed part-way through a line: the file does not end with a newline. */
  unterminated: boolean;
  /** Bytes in the file: its size when opened plus what this process wrote since. */
  size: number;
}

/** Size rotation: a new file before one would pass `bytes`, `keep` older ones beside it (`<name>.1` the newest). */
export interface FileRotation {
  bytes: number;
  keep: number;
}

const NEWLINE = Buffer.from("\n");

/**
 * Whether an existing regular file ends part-way through a line: a write cut short (disk full) before this process
 * (or this open) began. The next write then ends that fragment first, so only the fragment is lost, as one bad line.
 * Read through a read-only open of its own (the file itself is opened append-only: a policy that lets the emitter
 * append but not read, a FIFO, stay as they were); a file that cannot be read, or that is no longer the one opened,
 * counts as ending a line.
 */
async function endsUnterminated(path: string, info: { dev: number; ino: number; size: number; isFile(): boolean }) {
  if (!info.isFile() || info.size === 0) return false;
  let reader: FileHandle;
  try {
    reader = await open(path, "r");
  } catch {
    return false;
  }
  try {
    const now = await reader.stat();
    if (now.dev !== info.dev || now.ino !== info.ino) return false;
    const last = Buffer.alloc(1);
    const { bytesRead } = await reader.read(last, 0, 1, info.size - 1);
    return bytesRead === 1 && last[0] !== NEWLINE[0];
  } finally {
    await reader.close().catch(() => undefined);
  }
}

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;

/**
 * An append-only JSONL file that follows rotation: before every batch it compares the path's device and inode
 * with the open file's, and reopens by path when they differ or the path is gone (rename + create, or the file
 * deleted). A copytruncate needs nothing: the file is opened with O_APPEND, so writes land at the new end.
 * `requestReopen()` (e.g. on SIGHUP) forces a reopen at the next batch. A file that does not end with a newline when
 * opened (a line cut short before a restart) gets one before the first write, like a write cut short in this process.
 *
 * With `rotation`, it rotates the file itself, as logrotate's numbered scheme does (which the agent follows): before
 * a batch would take a non-empty file past `rotation.bytes`, `<name>.<keep-1>` … `<name>.1` move up one (the oldest,
 * `<name>.<keep>`, replaced: deleted) and the file becomes `<name>.1`; a new file is created for the batch. Batches
 * end at a line's end, so a rotation never cuts a line. A rename that fails does not lose the batch: it goes to the
 * file as it is, `onRotateError` hears why, and the next batch tries again. One process per file: two writers
 * rotating one path would rename each other's files.
 */
export class FileTarget implements SinkTarget {
  private file: OpenFile | undefined;
  private reopenRequested = false;

  constructor(
    readonly name: string,
    private readonly fsync: boolean,
    private readonly rotation?: FileRotation,
    private readonly onRotateError: (error: Error) => void = () => undefined,
  ) {}

  requestReopen(): void {
    this.reopenRequested = true;
  }

  async write(chunk: Uint8Array): Promise<void> {
    try {
      let file = await this.current();
      if (this.rotation && file.size > 0 && file.size + chunk.byteLength > this.rotation.bytes) {
        file = await this.rotate(file, this.rotation);
      }
      // a failed write that left part of a line: end it first, so the next record is not glued to the fragment
      // (the fragment becomes one invalid line, which the agent dead-letters; the record after it stays whole)
      if (file.unterminated) await this.writeAll(file, NEWLINE);
      await this.writeAll(file, chunk);
      if (this.fsync) await file.handle.datasync();
    } catch (error) {
      if (error instanceof AuditEmitterError) throw error;
      throw this.failure("write", error);
    }
  }

  /** Every byte of `chunk`; a failure after some bytes marks the file's last line unterminated. */
  private async writeAll(file: OpenFile, chunk: Uint8Array): Promise<void> {
    let offset = 0;
    try {
      while (offset < chunk.byteLength) {
        const { bytesWritten } = await file.handle.write(chunk, offset, chunk.byteLength - offset);
        offset += bytesWritten;
        file.size += bytesWritten;
      }
      file.unterminated = false;
    } catch (error) {
      if (offset > 0) file.unterminated = chunk[offset - 1] !== NEWLINE[0];
      throw error;
    }
  }

  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.handle.close();
  }

  /** The open file, reopened first when the path no longer names it. */
  private async current(): Promise<OpenFile> {
    const file = this.file;
    if (file && !this.reopenRequested && (await this.pathStillNames(file))) return file;
    this.reopenRequested = false;
    return this.reopen(file);
  }

  /** Leaves `old` (its cut line ended, best effort) and opens the file at the name. */
  private async reopen(old: OpenFile | undefined): Promise<OpenFile> {
    this.file = undefined;
    if (old?.unterminated) await this.writeAll(old, NEWLINE).catch(() => undefined);
    await old?.handle.close().catch(() => undefined);
    this.file = await this.openFile();
    return this.file;
  }

  /**
   * Moves the generations up one and the file to `<name>.1`, then opens a new file at the name; on a failed rename,
   * `file` itself (the batch is written there; the next one tries again).
   */
  private async rotate(file: OpenFile, { keep }: FileRotation): Promise<OpenFile> {
    try {
      for (let n = keep - 1; n >= 1; n -= 1) {
        await rename(`${this.name}.${n}`, `${this.name}.${n + 1}`).catch((error: unknown) => {
          if (errnoOf(error) !== "ENOENT") throw error;
        });
      }
      await rename(this.name, `${this.name}.1`);
    } catch (error) {
      this.onRotateError(this.failure("rotate", error));
      return file;
    }
    return this.reopen(file);
  }

  private async pathStillNames(file: OpenFile): Promise<boolean> {
    try {
      const now = await stat(this.name);
      return now.ino === file.ino && now.dev === file.dev;
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return false;
      throw this.failure("stat", error);
    }
  }

  private async openFile(): Promise<OpenFile> {
    let handle: FileHandle;
    try {
      // O_EXCL first, to know whether this call created the file and must set its mode past the umask
      handle = await open(this.name, "ax", AUDIT_FILE_MODE);
      await handle.chmod(AUDIT_FILE_MODE);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw this.failure("open", error);
      try {
        handle = await open(this.name, "a");
      } catch (again) {
        throw this.failure("open", again);
      }
    }
    try {
      const info = await handle.stat();
      return {
        handle,
        dev: info.dev,
        ino: info.ino,
        unterminated: await endsUnterminated(this.name, info),
        size: info.size,
      };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw this.failure("open", error);
    }
  }

  private failure(operation: string, cause: unknown): AuditEmitterError {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new AuditEmitterError("AUDIT_EMITTER_WRITE_FAILED", `audit log ${operation} failed: ${reason}`, {
      subject: this.name,
      cause,
    });
  }
}
