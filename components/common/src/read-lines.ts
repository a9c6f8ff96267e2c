/**
 * Reads a byte stream (a child's stdout or stderr) as text lines: `onLine` gets each non-blank line without its
 * newline, the last one even when it has none. Resolves when the stream ends. A stream that fails (a pipe torn by
 * kill -9) or an `onLine` that throws ends the read and goes to `onError` instead of rejecting, so no caller leaves
 * an unhandled rejection behind that a test runner would pin on whichever test runs at that moment.
 */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
  onError: (error: unknown) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  try {
    for await (const chunk of stream) {
      rest += decoder.decode(chunk, { stream: true });
      let index = rest.indexOf("\n");
      while (index >= 0) {
        const line = rest.slice(0, index);
        rest = rest.slice(index + 1);
        if (line.trim()) onLine(line);
        index = rest.indexOf("\n");
      }
    }
    rest += decoder.decode();
  } catch (error) {
    onError(error);
  }
  try {
    if (rest.trim()) onLine(rest);
  } catch (error) {
    onError(error);
  }
}

/**
 * `readLines` for a child that logs JSON lines (pino): each line that parses goes to `onJson`, any other (a crash
 * trace, a runtime's warning) to `onText`.
 */
export function readJsonLines<T>(
  stream: ReadableStream<Uint8Array>,
  onJson: (value: T) => void,
  onText: (line: string) => void,
  onError: (error: unknown) => void,
): Promise<void> {
  return readLines(
    stream,
    (line) => {
      let value: T;
      try {
        value = JSON.parse(line) as T;
      } catch {
        onText(line);
        return;
      }
      onJson(value);
    },
    onError,
  );
}
