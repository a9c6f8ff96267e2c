import { expect, test } from "bun:test";
import { readJsonLines, readLines } from "../index.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

/** Hands out one chunk per read, then closes, or fails once the chunks are read. */
function streamOf(chunks: Uint8Array[], failure?: Error): ReadableStream<Uint8Array> {
  const queue = [...chunks];
  return new ReadableStream({
    pull(controller) {
      const chunk = queue.shift();
      if (chunk) controller.enqueue(chunk);
      else if (failure) controller.error(failure);
      else controller.close();
    },
  });
}

test("lines split across chunks (and a character split across them) arrive whole; blank lines are skipped; the last needs no newline", async () => {
  const euro = bytes("€");
  const lines: string[] = [];
  const errors: unknown[] = [];
  await readLines(
    streamOf([bytes('{"a":1}\n{"b":'), bytes("2}\n\n  \nprice "), euro.subarray(0, 1), euro.subarray(1), bytes("5")]),
    (line) => lines.push(line),
    (error) => errors.push(error),
  );
  expect(lines).toEqual(['{"a":1}', '{"b":2}', "price €5"]);
  expect(errors).toEqual([]);
});

test("a stream that fails is reported to onError (no rejection); the lines before it and the partial last one are kept", async () => {
  const lines: string[] = [];
  const errors: unknown[] = [];
  const torn = new Error("pipe torn");
  const outcome = readLines(
    streamOf([bytes("one\ntw")], torn),
    (line) => lines.push(line),
    (error) => errors.push(error),
  );
  await expect(outcome).resolves.toBeUndefined();
  expect(errors).toEqual([torn]);
  expect(lines).toEqual(["one", "tw"]);
});

test("a child's stdout killed with SIGKILL mid-stream ends the read without a rejection", async () => {
  const child = Bun.spawn([process.execPath, "-e", "setInterval(() => console.log('x'.repeat(100)), 1)"], {
    stdout: "pipe",
  });
  let count = 0;
  const errors: unknown[] = [];
  const reading = readLines(
    child.stdout,
    () => {
      count += 1;
      if (count === 20) child.kill("SIGKILL");
    },
    (error) => errors.push(error),
  );
  await reading;
  expect(await child.exited).not.toBe(0);
  expect(count).toBeGreaterThanOrEqual(20);
  expect(errors).toEqual([]);
});

test("an onLine that throws ends the read and goes to onError, on a middle line and on the last one", async () => {
  const refuse = (line: string) => {
    if (line.startsWith("bad")) throw new Error(`refused ${line}`);
  };
  const middle: unknown[] = [];
  await readLines(streamOf([bytes("ok\nbad 1\nok\n")]), refuse, (error) => middle.push(error));
  expect(middle.map(String)).toEqual(["Error: refused bad 1"]);
  const last: unknown[] = [];
  await readLines(streamOf([bytes("ok\nbad 2")]), refuse, (error) => last.push(error));
  expect(last.map(String)).toEqual(["Error: refused bad 2"]);
});

test("readJsonLines: lines that parse go to onJson, the others (a crash trace) to onText, in their order", async () => {
  const values: unknown[] = [];
  const texts: string[] = [];
  await readJsonLines(
    streamOf([bytes('{"event":"ready","port":1}\npanic: boom\n[1,2]\n{"half":')]),
    (value) => values.push(value),
    (text) => texts.push(text),
    () => undefined,
  );
  expect(values).toEqual([{ event: "ready", port: 1 }, [1, 2]]);
  expect(texts).toEqual(["panic: boom", '{"half":']);
});
