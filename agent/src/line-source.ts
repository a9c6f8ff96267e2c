import type { SourceFile } from "./source-file.ts";

/** What reading the source gave: bytes, nothing yet, a switch to another file, a truncation, or its end. */
export type SourceEvent =
  | { kind: "data"; file: SourceFile; start: number; bytes: Buffer }
  | { kind: "idle" }
  /**
   * The path now names another file; the old one (or the copy of a truncated one) was read to its end. `to` is the
   * file at the path, or a generation rotated away after the old one (`generation`: its path), read first.
   */
  | {
      kind: "switched";
      from: SourceFile;
      to: SourceFile;
      reason: "rename" | "recreate" | "copytruncate";
      endOfOld: number;
      generation?: string;
    }
  /** The file was truncated and a copy of it found (copytruncate): its rest is read from the copy, same offsets. */
  | { kind: "copied"; from: SourceFile; to: SourceFile; copy: string; position: number }
  /** The file was truncated and no copy was found: reading restarts at 0 of a new generation. */
  | { kind: "truncated"; file: SourceFile; lostFrom: number }
  /** Standard input was closed after `position` bytes. */
  | { kind: "end"; file: SourceFile; position: number };

/** A file tail or standard input, read in chunks of at most `maxBytes`. */
export interface LineSource {
  /** `file path` or `stdin`: the dead-letter header `source`. */
  readonly name: string;
  next(maxBytes: number): Promise<SourceEvent>;
  /** Bytes in the source past the read position (0 when unknown, as for a pipe). */
  bytesUnread(): number;
  close(): Promise<void>;
}
