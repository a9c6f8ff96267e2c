/**
 * kill -9 of the writer in the second half of its window between PUT and offset commit: the index transaction
 * committed, the offset commit not (issue 7, "kill -9 of the consumer between PUT and offset commit";
 * crash-recovery.test.ts kills it in the first half, before the index transaction commits). The private broker is
 * stopped once the batches' index transactions are waiting on a lock the test holds; releasing the lock lets them
 * commit while no offset commit can reach a broker (the writer retries them), and the writer is killed there. Not
 * frozen with SIGSTOP: a commit sent to a frozen broker waits in its socket and is applied when it goes on, after
 * the kill.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { describeWithServers, waitFor } from "@svc/testkit";
import { ensureIndexSchema } from "../index.ts";
import { faultHarness } from "./fault-harness.ts";
import {
  committedOffsets,
  holdIndexLock,
  indexFacts,
  indexWritesWaiting,
  listVersions,
  makeLines,
  s3Client,
  spawnConsumer,
  stackAddresses,
  type TestNames,
} from "./helpers.ts";

describeWithServers("kill -9 after the index transaction, before the offset commit (a private broker)", () => {
  const harness = faultHarness(["kafka"]);
  const { sql } = harness;
  let names: TestNames;
  const shared = stackAddresses();
  const s3 = s3Client(shared);
  const brokers = () => stackAddresses(harness.server.env).brokers;

  const spawnWriter = () => spawnConsumer({ ...shared, brokers: brokers() }, names);

  beforeAll(async () => {
    names = await harness.namesFor("crash-idx");
    await ensureIndexSchema(sql, names.schema);
  });
  afterAll(() => s3.destroy());

  test("a restart writes the indexed batches again under their keys: every id once, counts not doubled", async () => {
    const lock = await holdIndexLock(sql, names.schema);
    const lines = makeLines(300);
    const first = spawnWriter();
    const exited = () => (first.exitCode !== null ? new Error("consumer exited") : undefined);
    let indexedKeys: string[] = [];
    let indexedBefore = 0;
    try {
      await harness.producer.send(names.topic, lines);
      await waitFor(
        "index transactions waiting on the lock",
        async () => ((await indexWritesWaiting(sql, names.schema)) > 0 ? true : undefined),
        { timeoutMs: 30_000, abort: exited },
      );
      // No offset commit can reach the broker from here on; then the index transactions may commit.
      await harness.server.stop();
      await lock.release();
      // One batch's index transaction committed at least (others may still be waiting for their records).
      indexedBefore = await waitFor(
        "a batch indexed while the broker is down",
        async () => {
          const events = (await indexFacts(sql, names.schema)).events;
          return events > 0 ? events : undefined;
        },
        { timeoutMs: 30_000, abort: exited },
      );
      const rows = (await sql`SELECT key FROM ${sql(`${names.schema}.objects`)}`) as { key: string }[];
      indexedKeys = rows.map((row) => row.key);
    } finally {
      first.kill("SIGKILL");
      await first.exited;
      await lock.release();
    }
    await harness.server.start();
    expect(first.signalCode).toBe("SIGKILL");
    // The kill came between the two commits: the index holds the batches' events, the group no offset.
    expect((await committedOffsets(brokers(), names.groupId, names.topic)).every((offset) => offset <= 0n)).toBe(true);
    expect((await indexFacts(sql, names.schema)).events).toBeGreaterThanOrEqual(indexedBefore);
    expect(indexedKeys.length).toBeGreaterThan(0);

    const second = spawnWriter();
    try {
      await waitFor(
        "every offset committed by the restarted writer",
        async () => {
          const committed = await committedOffsets(brokers(), names.groupId, names.topic);
          return committed.reduce((sum, offset) => sum + (offset > 0n ? offset : 0n), 0n) >= 300n ? true : undefined;
        },
        { timeoutMs: 60_000, abort: () => (second.exitCode !== null ? new Error("consumer exited") : undefined) },
      );
      // Written twice, recorded once: the rollups count each event once, each event is in one posting.
      const facts = await indexFacts(sql, names.schema);
      expect(facts).toMatchObject({ events: 300, distinctIds: 300, counted: 300, posted: 300, strays: 0 });
      // The batches indexed before the kill were read again and PUT again under their keys.
      const versions = await listVersions(s3, "svc-audit", names.keyPrefix);
      for (const key of indexedKeys) {
        expect({ key, versions: versions.filter((v) => v.Key === key).length >= 2 }).toEqual({ key, versions: true });
      }
    } finally {
      second.kill("SIGTERM");
    }
    expect(await second.exited).toBe(0);
  }, 150_000);
});
