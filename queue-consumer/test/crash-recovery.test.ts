import { beforeAll, describe, expect, test } from "bun:test";
import { waitFor } from "@svc/testkit";
import { ensureIndexSchema } from "../index.ts";
import {
  holdIndexLock,
  indexFacts,
  indexWritesWaiting,
  listVersions,
  makeLines,
  pipelineFixture,
  spawnConsumer,
} from "./helpers.ts";

const { addresses, s3, sql, names, producer } = pipelineFixture("crash", { partitions: 6, sqlConnections: 3 });

beforeAll(async () => {
  await ensureIndexSchema(sql, names.schema);
});

describe("kill -9 between PUT and offset commit", () => {
  test("after a restart every id is indexed once, and the retried batch is a second version of the same key", async () => {
    // The index transaction cannot finish while the test holds this lock: the consumer PUTs its objects, then waits
    // inside its transaction, before any offset commit. That is where it is killed.
    const lock = await holdIndexLock(sql, names.schema);

    const lines = makeLines(300);
    const first = spawnConsumer(addresses, names);
    let firstKeys: string[] = [];
    try {
      await producer.send(names.topic, lines);
      firstKeys = await waitFor(
        "objects PUT and their index transactions waiting on the lock",
        async () => {
          const versions = await listVersions(s3, "svc-audit", names.keyPrefix);
          const waiting = await indexWritesWaiting(sql, names.schema);
          return versions.length > 0 && waiting > 0 ? versions.map((v) => v.Key ?? "") : undefined;
        },
        { timeoutMs: 30_000, abort: () => (first.exitCode !== null ? new Error("consumer exited") : undefined) },
      );
    } finally {
      first.kill("SIGKILL");
      await first.exited;
      await lock.release();
    }
    expect(first.signalCode).toBe("SIGKILL");
    // Nothing of the killed transactions stayed.
    expect((await indexFacts(sql, names.schema)).events).toBe(0);

    const second = spawnConsumer(addresses, names);
    try {
      await waitFor(
        "every id indexed",
        async () => {
          const facts = await indexFacts(sql, names.schema);
          return facts.distinctIds >= 300 ? facts : undefined;
        },
        { timeoutMs: 40_000, abort: () => (second.exitCode !== null ? new Error("consumer exited") : undefined) },
      );
      const facts = await indexFacts(sql, names.schema);
      expect(facts).toMatchObject({ events: 300, distinctIds: 300, counted: 300, posted: 300, strays: 0 });
      const versions = await listVersions(s3, "svc-audit", names.keyPrefix);
      for (const key of new Set(firstKeys)) {
        expect(versions.filter((v) => v.Key === key).length).toBeGreaterThanOrEqual(2);
      }
    } finally {
      second.kill("SIGTERM");
    }
    expect(await second.exited).toBe(0);
  }, 120_000);
});
