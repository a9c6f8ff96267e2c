/**
 * The writer's index transaction alone (issue 7's consumer limit): N records in batches of the writer's size,
 * each indexed by `writeBatchIndex` into a fresh schema of the stack's PostgreSQL, as the writer does after the PUT.
 * Prints rows/s per batch transaction and overall, the CPU per row of its PostgreSQL backend and of this process
 * (reading the index fields and encoding the rows, `seal`, included; the rate's clock starts after it), and the table
 * and index sizes. No Kafka, no S3.
 *
 *   bun run bench/src/pipeline/index-write.ts [--records 200000] [--batch 20000] [--principals N]
 *
 * `--principals N`: N principals per tenant instead of the workload's 31 (each record's `principal_id` is
 * `user-<seq mod N>@<tenant>`): many principals that each act rarely make the rollups and the principal postings
 * about one row per event.
 */
import { parseArgs } from "node:util";
import { ensureIndexSchema, PartitionBatch, writeBatchIndex } from "@svc/queue-consumer";
import { cpuMsOf } from "@svc/stack";
import { SQL } from "bun";
import { RECORD_BYTES, recordLine, WORKLOAD_PRINCIPALS } from "./generate-records.ts";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "200000" },
    batch: { type: "string", default: "20000" },
    principals: { type: "string", default: String(WORKLOAD_PRINCIPALS) },
  },
});
const records = Number(values.records);
const perBatch = Number(values.batch);
const principals = Number(values.principals);
if ([records, perBatch, principals].some((n) => !Number.isInteger(n) || n <= 0)) {
  console.error("usage: index-write.ts [--records N] [--batch N] [--principals N] (positive integers)");
  process.exit(2);
}
const url = process.env.SVC_STACK_PG_URL;
if (!url) {
  console.error("SVC_STACK_PG_URL is not set: `set -a; . ~/.local/state/svc-ops/stack/stack.env; set +a`");
  process.exit(2);
}

const run = Bun.randomUUIDv7().replaceAll("-", "").slice(-10);
const schema = `bench_${run}_index`;
// One connection: its backend's CPU is the index write's (read from /proc: the stack runs PostgreSQL on this machine).
const sql = new SQL({ url, max: 1 });
try {
  await ensureIndexSchema(sql, schema);
  const start = Date.now();
  let offset = 0n;
  const rates: number[] = [];
  const [{ pid }] = (await sql`SELECT pg_backend_pid() AS pid`) as [{ pid: number }];
  let backendMs = 0;
  let ownMs = 0;
  let rows = 0;
  for (let done = 0; done < records; done += perBatch) {
    const batch = new PartitionBatch("bench.index", 0);
    const count = Math.min(perBatch, records - done);
    for (let i = 0; i < count; i++) {
      batch.add(Buffer.from(recordLine(run, done + i, start + done + i, RECORD_BYTES, principals)), offset, 0, 1);
      offset += 1n;
    }
    const ownBefore = process.cpuUsage();
    const sealed = batch.seal();
    const backendBefore = cpuMsOf(pid) ?? Number.NaN;
    const began = performance.now();
    const { inserted } = await writeBatchIndex(sql, schema, sealed, {
      bucket: "svc-audit",
      key: `bench/${run}/${done}`,
      versionId: "v1",
      bytes: sealed.body.length,
      retainUntil: new Date(),
      writtenAt: new Date(),
    });
    const seconds = (performance.now() - began) / 1000;
    const own = process.cpuUsage(ownBefore);
    backendMs += (cpuMsOf(pid) ?? Number.NaN) - backendBefore;
    ownMs += (own.user + own.system) / 1000;
    rows += inserted;
    rates.push(inserted / seconds);
    console.error(
      `batch ${rates.length}: ${inserted} rows in ${seconds.toFixed(3)} s (${Math.round(inserted / seconds)}/s)`,
    );
  }
  const sorted = [...rates].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const sizes = await sql.unsafe(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'i') ORDER BY 2 DESC`,
    [schema],
  );
  console.log(`${records} rows in batches of ${perBatch}: median ${Math.round(median)} rows/s per batch transaction`);
  const perRow = (ms: number) => ((ms * 1000) / rows).toFixed(2);
  console.log(`CPU per row: PostgreSQL backend ${perRow(backendMs)} µs, this process ${perRow(ownMs)} µs`);
  for (const row of sizes as { name: string; bytes: string }[]) {
    console.log(`  ${row.name}: ${(Number(row.bytes) / 2 ** 20).toFixed(1)} MiB`);
  }
} finally {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await sql.close();
}
