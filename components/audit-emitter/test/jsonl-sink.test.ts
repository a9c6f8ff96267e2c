import { afterEach, beforeEach, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { waitFor } from "@svc/common";
import { rejectionOf, type TempDir, tempDir } from "@svc/testkit";
import { AuditEmitterError, FileTarget, JsonlSink, type SinkTarget, StreamTarget } from "../index.ts";

let dir: TempDir;

beforeEach(async () => {
  dir = await tempDir("sink");
});

afterEach(async () => {
  await dir.remove();
});

/** Counts the writes reaching a real file target (instrumentation, not a fake). */
function counting(target: SinkTarget): SinkTarget & { writes: number } {
  const counted = {
    name: target.name,
    writes: 0,
    write(chunk: Uint8Array) {
      counted.writes += 1;
      return target.write(chunk);
    },
    requestReopen: () => target.requestReopen(),
    close: () => target.close(),
  };
  return counted;
}

test("20 000 lines queued at once are written in order, in far fewer writes than lines", async () => {
  const path = join(dir.path, "audit.jsonl");
  const target = counting(new FileTarget(path, false));
  const sink = new JsonlSink(target, 16 * 1024 * 1024);
  const writes: Promise<void>[] = [];
  for (let i = 0; i < 20_000; i++) writes.push(sink.write(`${i}\n`));
  await Promise.all(writes);
  await sink.close();
  const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
  expect(lines).toEqual(Array.from({ length: 20_000 }, (_, i) => String(i)));
  expect(target.writes).toBeLessThan(10);
});

test("lines queued while a write is in flight go out together, after it", async () => {
  const path = join(dir.path, "audit.jsonl");
  const target = counting(new FileTarget(path, false));
  const sink = new JsonlSink(target, 1024 * 1024);
  const first = sink.write("a\n");
  await Promise.resolve(); // the first batch is now in flight
  const later = [sink.write("b\n"), sink.write("c\n")];
  await Promise.all([first, ...later]);
  expect(await readFile(path, "utf8")).toBe("a\nb\nc\n");
  expect(target.writes).toBe(2);
  await sink.close();
});

test("a full buffer refuses at once with AUDIT_EMITTER_BUFFER_FULL, and accepts again once the target drains", async () => {
  // a real stream nobody reads: its write callbacks wait until it is read
  const stream = new PassThrough({ highWaterMark: 16 });
  const sink = new JsonlSink(new StreamTarget("pipe", stream), 64 * 1024);
  const line = `${"x".repeat(1023)}\n`;
  const accepted: Promise<void>[] = [];
  const refused: AuditEmitterError[] = [];
  for (let i = 0; i < 100; i++) {
    const before = sink.bufferedBytes;
    const pending = sink.write(line);
    if (sink.bufferedBytes > before) accepted.push(pending);
    else pending.catch((error: AuditEmitterError) => refused.push(error));
  }
  await waitFor("the refusals", async () => (refused.length > 0 ? true : undefined), { timeoutMs: 5_000 });
  expect(accepted.length).toBe(64); // 64 lines of 1 KiB fill 64 KiB exactly
  expect(refused).toHaveLength(100 - accepted.length);
  const [first] = refused;
  expect(first?.code).toBe("AUDIT_EMITTER_BUFFER_FULL");
  expect(first?.canRetry).toBe(true);
  expect(sink.bufferedBytes).toBeLessThanOrEqual(64 * 1024);
  stream.resume(); // the reader comes back
  await Promise.all(accepted);
  await waitFor("an empty buffer", async () => (sink.bufferedBytes === 0 ? true : undefined), { timeoutMs: 5_000 });
  await sink.write("after\n");
});

test("a write after close() is refused with AUDIT_EMITTER_CLOSED; close() wrote what was queued", async () => {
  const path = join(dir.path, "audit.jsonl");
  const sink = new JsonlSink(new FileTarget(path, true), 1024 * 1024);
  void sink.write("queued\n");
  await sink.close();
  expect(await readFile(path, "utf8")).toBe("queued\n");
  const error = await rejectionOf(sink.write("late\n"), AuditEmitterError);
  expect(error.code).toBe("AUDIT_EMITTER_CLOSED");
});
