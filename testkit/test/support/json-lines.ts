/** The JSON lines of a child process's output, one at a time; other lines (a CLI's own output) are skipped. */
export interface JsonLines {
  /** The next JSON line, parsed; rejects when the output ends first. */
  next(): Promise<Record<string, unknown>>;
}

export function jsonLines(stream: ReadableStream<Uint8Array>): JsonLines {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    async next() {
      for (;;) {
        const end = buffered.indexOf("\n");
        if (end >= 0) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          if (line.startsWith("{")) return JSON.parse(line) as Record<string, unknown>;
          continue;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error(`the output ended before a complete line (left: ${JSON.stringify(buffered)})`);
        buffered += decoder.decode(value, { stream: true });
      }
    },
  };
}
