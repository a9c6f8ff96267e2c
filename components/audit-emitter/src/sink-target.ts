/** Where a sink's batches go: a file (rotation-aware) or a stream such as stdout. One writer at a time. */
export interface SinkTarget {
  /** `stdout`, or the file path: the `subject` of a write failure. */
  readonly name: string;
  /** Writes every byte of `chunk`, in order after the previous chunk; rejects with `AUDIT_EMITTER_WRITE_FAILED`. */
  write(chunk: Uint8Array): Promise<void>;
  /** Makes the next write reopen the target by its name (a no-op for a stream). */
  requestReopen(): void;
  close(): Promise<void>;
}
