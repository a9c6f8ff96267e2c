import type { LineSource, SourceEvent } from "./line-source.ts";
import { SourceFile } from "./source-file.ts";

/**
 * Standard input as a source. A pipe cannot be read again, so there is no checkpoint: records read and not yet
 * acknowledged when the process dies are lost to this agent (the writer should use a file for that guarantee).
 */
export class ReadStdin implements LineSource {
  readonly name = "stdin";
  readonly #file = new SourceFile("stdin", 0, 0);
  readonly #reader: { read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>; cancel(): Promise<void> };
  #position = 0;
  #ended = false;

  constructor(stream: ReadableStream<Uint8Array> = Bun.stdin.stream()) {
    this.#reader = stream.getReader();
  }

  bytesUnread(): number {
    return 0;
  }

  async next(_maxBytes: number): Promise<SourceEvent> {
    if (this.#ended) return this.#end();
    const { done, value } = await this.#reader.read();
    if (done || value === undefined) {
      this.#ended = true;
      return this.#end();
    }
    const start = this.#position;
    this.#position += value.byteLength;
    return {
      kind: "data",
      file: this.#file,
      start,
      bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength),
    };
  }

  #end(): SourceEvent {
    return { kind: "end", file: this.#file, position: this.#position };
  }

  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => undefined);
  }
}
