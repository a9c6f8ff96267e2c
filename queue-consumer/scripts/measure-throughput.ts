/**
 * Consumer-alone throughput: fills a fresh 6-partition topic with N ≈ 400-byte records, then times
 * `kcat -C` (topic → local file) and the consumer (`src/main.ts`, topic → S3 + index) on the same records, and
 * reports records/s and the consumer's peak RSS. Not a test: `bun run queue-consumer/scripts/measure-throughput.ts
 * [records]` with the dev stack's env loaded. Objects go under a random prefix in `svc-audit` (locked 1 day).
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Consumer, Producer } from "@platformatic/kafka";
import { randomName } from "@svc/testkit";
import { SQL } from "bun";
import {
  consumerEnv,
  createTopic,
  deleteTopic,
  dropSchema,
  recordLine,
  stackAddresses,
  testNames,
} from "../test/helpers.ts";

const total = Number(process.argv[2] ?? 1_000_000);
const extraEnv = Object.fromEntries(
  Object.entries(process.env)
    .filter(([key]) => key.startsWith("MEASURE_SVC_AUDIT_"))
    .map(([k, v]) => [k.slice(8), v ?? ""]),
);
const addresses = stackAddresses();
const names = testNames("measure");
const brokers = addresses.brokers.split(",");
await createTopic(addresses.brokers, names.topic, 6);
const sql = new SQL({ url: addresses.pgUrl, max: 1 });

try {
  // Fill.
  const producer = new Producer({ clientId: "qc-measure", bootstrapBrokers: brokers, acks: 1, retries: true });
  const prefix = randomName("m");
  const t0 = performance.now();
  const chunk = 2_000;
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < total; i += chunk) {
    const messages = [];
    for (let j = i; j < Math.min(total, i + chunk); j++) {
      const tenant = `tenant-${j % 50}`;
      messages.push({
        topic: names.topic,
        key: Buffer.from(tenant),
        value: Buffer.from(recordLine(`${prefix}-${j}`, tenant)),
      });
    }
    inFlight.push(producer.send({ messages }));
    if (inFlight.length >= 8) await inFlight.shift();
  }
  await Promise.all(inFlight);
  await producer.close();
  console.log(`filled ${total} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // kcat -C to a file: the limit of this machine and broker.
  const file = join(tmpdir(), `${names.topic}.jsonl`);
  const k0 = performance.now();
  const kcat = Bun.spawn(
    ["kcat", "-C", "-b", addresses.brokers, "-t", names.topic, "-o", "beginning", "-e", "-q", "-c", String(total)],
    { stdout: Bun.file(file), stderr: "inherit" },
  );
  await kcat.exited;
  const kcatSeconds = (performance.now() - k0) / 1000;
  rmSync(file, { force: true });
  console.log(`kcat -C:  ${Math.round(total / kcatSeconds)} records/s (${kcatSeconds.toFixed(1)} s)`);

  // The consumer, spawned, from the earliest offset.
  const main = new URL("../src/main.ts", import.meta.url).pathname;
  const env = consumerEnv(addresses, names, {
    SVC_AUDIT_BATCH_MAX_AGE_MS: "9000",
    SVC_AUDIT_RETRY_MAX_MS: "5000",
    SVC_AUDIT_LOG_LEVEL: "warn",
    ...extraEnv,
  });
  const c0 = performance.now();
  const runFlags = process.env.MEASURE_BUN_FLAGS ? process.env.MEASURE_BUN_FLAGS.split(" ") : [];
  const child = Bun.spawn([process.execPath, ...runFlags, "run", main], {
    env: { ...process.env, ...env },
    stderr: "inherit",
  });
  const offsets = new Consumer({ clientId: "qc-measure-offsets", bootstrapBrokers: brokers, groupId: names.groupId });
  let peakRss = 0;
  for (;;) {
    const status = await Bun.file(`/proc/${child.pid}/status`)
      .text()
      .catch(() => "");
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    if (hwm) peakRss = Math.max(peakRss, Number(hwm) * 1024);
    const committed = (
      await offsets.listCommittedOffsets({ topics: [{ topic: names.topic, partitions: [0, 1, 2, 3, 4, 5] }] })
    ).get(names.topic);
    const done = (committed ?? []).reduce((n, o) => n + (o > 0n ? o : 0n), 0n);
    if (done >= BigInt(total)) break;
    if (child.exitCode !== null) throw new Error(`consumer exited ${child.exitCode}`);
    await Bun.sleep(200);
  }
  const consumerSeconds = (performance.now() - c0) / 1000;
  await offsets.close(true);
  child.kill("SIGTERM");
  await child.exited;
  const [indexed] = await sql`SELECT count(*)::int AS n FROM ${sql(`${names.schema}.events`)}`;
  console.log(
    `consumer: ${Math.round(total / consumerSeconds)} records/s (${consumerSeconds.toFixed(1)} s, start included), ` +
      `peak RSS ${Math.round(peakRss / 1048576)} MiB, indexed ${(indexed as { n: number }).n}, ` +
      `${((100 * kcatSeconds) / consumerSeconds).toFixed(0)} % of kcat -C`,
  );
} finally {
  await deleteTopic(addresses.brokers, names.topic);
  await dropSchema(sql, names.schema);
  await sql.close();
}
