import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { type TempDir, tempDir, waitFor } from "@svc/testkit";
import pino from "pino";
import { AgentMetrics } from "../src/agent-metrics.ts";
import { type Checkpoint, readCheckpoint } from "../src/checkpoint-file.ts";
import { CheckpointWriter } from "../src/checkpoint-writer.ts";

const dirs: TempDir[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => dir.remove()));
});

const at = (offset: number): Checkpoint => ({
  version: 1,
  path: "/var/log/audit.jsonl",
  dev: 1,
  ino: 2,
  offset,
  fingerprint: { length: 0, sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
});

test("one write per interval, the newest position; settle() writes the last one without waiting for the interval", async () => {
  const dir = await tempDir("agent-checkpoint-writer");
  dirs.push(dir);
  const path = join(dir.path, "cp.json");
  const metrics = new AgentMetrics({
    bytesBehind: () => 0,
    inFlightBytes: () => 0,
    readBufferBytes: () => 0,
    shipping: () => true,
  });
  const written = () => AgentMetrics.valueOf(metrics.checkpointsWritten);
  const writer = new CheckpointWriter({
    path,
    log: pino({ level: "silent" }),
    metrics,
    onHealth: () => undefined,
    minIntervalMs: 60_000,
  });
  try {
    writer.advance(at(100));
    await waitFor("first write", async () => ((await written()) === 1 ? true : undefined), {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    // Within the interval: positions are merged, none is written. (These two checks run before any write could
    // finish; what fails without the interval is the count of writes at the end: 2, not 3.)
    writer.advance(at(200));
    writer.advance(at(300));
    expect((await readCheckpoint(path))?.offset).toBe(100);
    expect(await written()).toBe(1);
    const started = Date.now();
    await writer.settle();
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await readCheckpoint(path))?.offset).toBe(300);
    expect(await written()).toBe(2);
  } finally {
    writer.stop();
  }
});
