/**
 * `bun run bench:api [--bulk-events N] [--real-events M] [--seconds S] [--concurrency C] [--no-duckdb]
 * [--fresh-rate R] [--fresh-seconds F] [--object-cache-mib C] [--disk-cache-mib D] [--export-only]
 * [--export-client curl|fetch] [--compression none|gzip]` (F = 0:
 * no freshness run; C: the API's block cache for lists, SVC_AUDIT_API_OBJECT_CACHE_BYTES, default the API's 64;
 * 0 = every page a GET; D: its disk tier, SVC_AUDIT_API_DISK_CACHE_BYTES in a directory of the run, empty at the
 * start, default 1024 as the chart deploys it, 0 = none; `--export-only`: only the export section, and the freshness run unless F = 0;
 * `--export-client`: who reads the export — `curl` (default), a process of its own as a SIEM's client would be, or
 * `fetch` in the bench's process, which then shares the API's JavaScript thread; `--compression`: the real records'
 * objects as the writer's SVC_AUDIT_OBJECT_COMPRESSION would store them): the audit API's goals of issue 8 on
 * the local stack, with auth on (a Keycloak token of a realm seeded here):
 *
 * - total_count over N stored events (p50/p99, whole range with partial-minute ends; and with a principal filter),
 *   with the API's kept rollup sum and cold (each call's whole minutes new);
 * - a page of 100 (p50/p99, random positions), list calls/s at concurrency C (the load from list-load.ts, a process
 *   of its own), export MB/s (REST, streamed); per call and per MiB the CPU of the API, PostgreSQL and MinIO;
 * - the peer: DuckDB `read_json` counting the same real records from local JSONL files (the objects' bytes);
 * - freshness: written → listed, p50/p99, at R records/s for F s (freshness-section.ts).
 *
 * Data, one tenant (the token's): M real records written through the writer's path (objects under Object Lock in
 * `svc-audit`, prefix `bench/api-…/`, kept 1 day; index rows) in October, and N more index rows made in SQL
 * (events + the minute and hour rollups) in September, each pointing at one of the real lines (its object and byte range):
 * the count reads only the index, and a page reads real bytes, without N objects in MinIO. Not a test: nothing is
 * asserted; the numbers are printed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { S3Client } from "@aws-sdk/client-s3";
import { runCommand } from "@svc/common";
import {
  claimIndexVersion,
  ensureIndexSchema,
  PartitionBatch,
  principalPostingsInsert,
  putBatchObject,
  writeBatchIndex,
} from "@svc/queue-consumer";
import { randomName, seedTestRealm, stackEnv } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { SQL } from "bun";
import { pino } from "pino";
import { parseAuditApiConfig, startAuditApi } from "../index.ts";
import { measureFreshness } from "./freshness-section.ts";
import type { ListLoadResult, ListLoadSettings } from "./list-load.ts";
import { apiBackendsCpu, stackServerCpu } from "./pg-cpu.ts";
import { quantile } from "./quantile.ts";

const { values: args } = parseArgs({
  options: {
    "bulk-events": { type: "string", default: "2000000" },
    "real-events": { type: "string", default: "50000" },
    seconds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "16" },
    "no-duckdb": { type: "boolean", default: false },
    "fresh-rate": { type: "string", default: "10000" },
    "fresh-seconds": { type: "string", default: "10" },
    "object-cache-mib": { type: "string" },
    "disk-cache-mib": { type: "string", default: "1024" },
    "export-only": { type: "boolean", default: false },
    "export-client": { type: "string", default: "curl" },
    compression: { type: "string", default: "none" },
  },
});
const EXPORT_CLIENT = args["export-client"];
if (EXPORT_CLIENT !== "curl" && EXPORT_CLIENT !== "fetch") {
  console.error(`bench:api: --export-client is curl or fetch (got ${JSON.stringify(EXPORT_CLIENT)})`);
  process.exit(2);
}
const COMPRESSION = args.compression;
if (COMPRESSION !== "none" && COMPRESSION !== "gzip") {
  console.error(`bench:api: --compression is none or gzip (got ${JSON.stringify(COMPRESSION)})`);
  process.exit(2);
}
const BULK = Number(args["bulk-events"]);
const REAL = Number(args["real-events"]);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const EXPORT_ONLY = args["export-only"];
const DUCKDB_VERSION = "1.5.6";
const VENV = join(homedir(), ".cache/svc-ops/venv-duckdb");

const log = (line: string) => process.stderr.write(`bench:api: ${line}\n`);
const stack = stackEnv();
const schema = randomName("bench_api").replaceAll("-", "_");
const keyPrefix = `bench/api-${randomName("p").slice(2)}/`;
const topic = randomName("bench-api");
const REAL_START = Date.parse("2026-10-01T00:00:00Z");
const REAL_SPAN_MS = 2 * 3_600_000;
const BULK_START = Date.parse("2026-09-01T00:00:00Z");
const BULK_SPAN_S = 7 * 86_400;
const PRINCIPALS = 10;

const ms = (value: number) => `${value.toFixed(1)} ms`;
/**
 * Marks where a measured section starts (`name`) or ends (`""`), in epoch µs: the windows that
 * `audit-api/bench/profile-window.ts` cuts out of a `--cpu-prof` profile (whose sample times are epoch µs too).
 */
const section = (name: string) =>
  log(`section ${JSON.stringify(name)} at ${Math.round((performance.timeOrigin + performance.now()) * 1000)}`);

/** One export read in the bench's own process (its JavaScript thread is the API's too). */
async function exportWithFetch(url: string, head: Record<string, string>, body: string) {
  const start = performance.now();
  const response = await fetch(url, { method: "POST", headers: head, body });
  if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
  let bytes = 0;
  for await (const part of response.body as ReadableStream<Uint8Array>) bytes += part.length;
  return { bytes, seconds: (performance.now() - start) / 1000 };
}

/** One export read by curl, a process of its own (as a SIEM's client would read it), the body counted and dropped. */
async function exportWithCurl(url: string, head: Record<string, string>, body: string) {
  // The headers (the bearer token among them) go through a file only this user reads, not the command line.
  const headerFile = join(dir, "export-headers");
  writeFileSync(
    headerFile,
    Object.entries(head)
      .map(([name, value]) => `${name}: ${value}\n`)
      .join(""),
    { mode: 0o600 },
  );
  const command = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}", "-X", "POST"];
  const {
    code,
    stdout: out,
    stderr: err,
  } = await runCommand([...command, "-H", `@${headerFile}`, "--data-binary", body, url]);
  const [status, bytes, seconds] = out.trim().split(" ");
  if (code !== 0 || status !== "200") throw new Error(`export through curl: exit ${code}, HTTP ${status}: ${err}`);
  return { bytes: Number(bytes), seconds: Number(seconds) };
}

/** The list-rate load, run by list-load.ts in a process of its own (its settings, the token among them, on stdin). */
async function listLoad(settings: ListLoadSettings): Promise<ListLoadResult> {
  const {
    code,
    stdout: out,
    stderr: err,
  } = await runCommand([process.execPath, join(import.meta.dir, "list-load.ts")], {
    stdin: JSON.stringify(settings),
  });
  if (code !== 0) throw new Error(`list-load.ts: exit ${code}: ${err.slice(0, 500)}`);
  const result = JSON.parse(out) as ListLoadResult;
  if (result.failure !== undefined) throw new Error(`list-load.ts: ${result.failure}`);
  return result;
}

const sql = new SQL({ url: stack.postgresUrl, max: 4 });
const s3 = new S3Client({
  endpoint: stack.s3.endpoint,
  region: stack.s3.region,
  credentials: { accessKeyId: stack.s3.accessKeyId, secretAccessKey: stack.s3.secretAccessKey },
  forcePathStyle: true,
});
const dir = mkdtempSync(join(tmpdir(), "bench-api-"));
const realm = await seedTestRealm("bench-api");
const tenant = realm.seed.tenantId;
const results: [string, string, string][] = [];

try {
  await ensureIndexSchema(sql, schema);
  // Real records: the writer's path, 10 000 per object, a copy of each object's bytes in a local file for DuckDB.
  log(`writing ${REAL} records (objects + index)…`);
  mkdirSync(join(dir, "objects"));
  const perObject = 10_000;
  for (let first = 0; first < REAL; first += perObject) {
    const batch = new PartitionBatch(topic, 0);
    const lines: string[] = [];
    for (let i = first; i < Math.min(REAL, first + perObject); i++) {
      const time = REAL_START + Math.floor((i * REAL_SPAN_MS) / REAL);
      const line = JSON.stringify({
        id: `ev-${String(i).padStart(9, "0")}`,
        time: new Date(time).toISOString(),
        source: "endpoint",
        action: i % 3 === 0 ? "/kms.Keys/Rotate" : "/svc.Endpoint/Search",
        resource: `index/products-${i % 100}`,
        result: i % 11 === 0 ? "PERMISSION_DENIED" : "OK",
        duration_ms: (i % 50) / 10,
        claimed_tenant_id: tenant,
        principal_id: `svc-p${i % PRINCIPALS}`,
        tenant_id: tenant,
      });
      lines.push(line);
      batch.add(Buffer.from(line), BigInt(i), time, i - first);
    }
    const sealed = batch.seal();
    const object = await putBatchObject(
      s3,
      { bucket: "svc-audit", keyPrefix, retentionDays: 1, compression: COMPRESSION },
      sealed,
    );
    await writeBatchIndex(sql, schema, sealed, object);
    writeFileSync(join(dir, "objects", `${String(first).padStart(9, "0")}.jsonl`), `${lines.join("\n")}\n`);
  }
  // N more index rows over 7 days of September, each naming one real line (its object and byte range), and their
  // rollup.
  log(`indexing ${BULK} index-only events…`);
  const chunk = 500_000;
  for (let start = 0; start < BULK; start += chunk) {
    const end = Math.min(BULK, start + chunk);
    await sql.begin(async (tx) => {
      // as a writer of the index's version: its trigger refuses event rows without the setting
      await claimIndexVersion(tx);
      await tx.unsafe(
        `WITH real AS (
         SELECT id, principal_id, action, result, resource, object_id, byte_start, byte_length,
                (row_number() OVER (ORDER BY time, id) - 1) AS k
           FROM "${schema}".events WHERE tenant_key = (SELECT tenant_key FROM "${schema}".tenants WHERE tenant_id = $1)
            AND time >= '2026-10-01'
       ), input AS (
         SELECT r.*, to_timestamp(${BULK_START / 1000} + (g::float8 * ${BULK_SPAN_S} / ${BULK})) AS time
           FROM generate_series(${start}, ${end - 1}) AS g JOIN real r ON r.k = g % ${REAL}
       ), inserted AS (
         INSERT INTO "${schema}".events (id, tenant_key, time, principal_id, action, result, resource, object_id,
                                         byte_start, byte_length)
         SELECT id, (SELECT tenant_key FROM "${schema}".tenants WHERE tenant_id = $1), time, principal_id, action,
                result, resource, object_id, byte_start, byte_length FROM input
         RETURNING id, $1::text AS tenant_id, time, principal_id, action, result
       ), postings AS (
         ${principalPostingsInsert(schema, "inserted")}
       ), minutes AS (
         INSERT INTO "${schema}".counts AS c (tenant_id, minute, principal_id, action, result, n)
         SELECT $1, date_trunc('minute', time, 'UTC'), principal_id, action, result, count(*)
           FROM inserted GROUP BY 2, 3, 4, 5
         ON CONFLICT (tenant_id, minute, principal_id, action, result) DO UPDATE SET n = c.n + excluded.n
       )
       INSERT INTO "${schema}".counts_hour AS h (tenant_id, hour, principal_id, action, result, n)
       SELECT $1, date_trunc('hour', time, 'UTC'), principal_id, action, result, count(*)
         FROM inserted GROUP BY 2, 3, 4, 5
       ON CONFLICT (tenant_id, hour, principal_id, action, result) DO UPDATE SET n = h.n + excluded.n`,
        [tenant],
      );
    });
  }
  await sql.unsafe(
    `VACUUM (ANALYZE) "${schema}".events, "${schema}".principal_events, "${schema}".counts, "${schema}".counts_hour`,
  );

  /** The API's settings, for the measured replica and the freshness run's. */
  const apiEnv: Record<string, string> = {
    SVC_AUDIT_HOST_PORT: "0",
    SVC_AUDIT_GRPC_HOST: "127.0.0.1",
    SVC_AUDIT_REST_PORT: "0",
    SVC_AUDIT_REST_HOST: "127.0.0.1",
    SVC_AUDIT_PG_URL: stack.postgresUrl,
    SVC_AUDIT_PG_POOL: "16",
    SVC_AUDIT_INDEX_SCHEMA: schema,
    SVC_AUDIT_S3_ENDPOINT: stack.s3.endpoint,
    SVC_AUDIT_S3_REGION: stack.s3.region,
    SVC_AUDIT_S3_ACCESS_KEY: stack.s3.accessKeyId,
    SVC_AUDIT_S3_SECRET_KEY: stack.s3.secretAccessKey,
    SVC_AUDIT_API_PAGE_TOKEN_KEY: "bench-page-token-key-0123456789abcdef",
    SVC_AUTH_ISSUER: realm.issuer,
    SVC_AUDIT_LOG_LEVEL: "silent",
    ...(args["object-cache-mib"] === undefined
      ? {}
      : { SVC_AUDIT_API_OBJECT_CACHE_BYTES: String(Number(args["object-cache-mib"]) * 1048576) }),
    // The disk tier as the chart deploys it (auditApi.diskCache), empty at the start of the run.
    ...(Number(args["disk-cache-mib"]) > 0
      ? {
          SVC_AUDIT_API_DISK_CACHE_DIR: join(dir, "blocks"),
          SVC_AUDIT_API_DISK_CACHE_BYTES: String(Number(args["disk-cache-mib"]) * 1048576),
        }
      : {}),
  };
  const api = await startAuditApi(parseAuditApiConfig(apiEnv), { logger: pino({ level: "silent" }) });
  try {
    const { url, realm: name, clientId, userPassword } = realm.seed;
    const token = await issueToken(
      { url, realm: name, clientId },
      { user: "security", password: userPassword, scope: "audit:read audit:export" },
    );
    const headers = (tenantId: string) => ({
      "content-type": "application/json",
      "x-tenant-id": tenantId,
      authorization: `Bearer ${token.access_token}`,
    });
    const base = `http://127.0.0.1:${api.restPort}`;
    const list = async (tenantId: string, body: Record<string, unknown>) => {
      const response = await fetch(`${base}/v2/audit/events`, {
        method: "POST",
        headers: headers(tenantId),
        body: JSON.stringify(body),
      });
      if (response.status !== 200) throw new Error(`list: ${response.status} ${await response.text()}`);
      return (await response.json()) as { total_count: number; events: unknown[] };
    };
    const timed = async (calls: number, call: () => Promise<unknown>) => {
      const samples: number[] = [];
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        await call();
        samples.push(performance.now() - t);
      }
      return samples;
    };
    const iso = (time: number) => new Date(time).toISOString();
    // Whole range with partial minutes at both ends (a random second inside the first and last minute).
    const bulkRange = () => ({
      start_time: iso(BULK_START + Math.floor(Math.random() * 59_000) + 500),
      end_time: iso(BULK_START + BULK_SPAN_S * 1000 - Math.floor(Math.random() * 59_000) - 500),
    });
    // CPU of this process (API and the bench's client; PostgreSQL and MinIO not included) per call and per MiB:
    // steadier than the rates on a shared machine.
    /** Process CPU since `since` per `unit` calls or MiB: total and its kernel part, in ms. */
    const cpuPer = (since: NodeJS.CpuUsage, unit: number, digits: number) => {
      const used = process.cpuUsage(since);
      const per = (us: number) => (us / 1000 / unit).toFixed(digits);
      return `${per(used.user + used.system)} ms (sys ${per(used.system)})`;
    };
    /** MinIO's CPU since `since` per `unit` calls or MiB (its process on this machine), or why it is not known. */
    const minioPer = (since: number | undefined, unit: number, digits: number) => {
      const now = stackServerCpu("minio");
      if (since === undefined || now === undefined) return "unknown (no MinIO pid file under SVC_STACK_STATE_DIR)";
      return `${((now - since) / unit).toFixed(digits)} ms`;
    };
    const realRange = () => {
      const start = REAL_START + Math.floor(Math.random() * (REAL_SPAN_MS - 600_000));
      return { start_time: iso(start), end_time: iso(REAL_START + REAL_SPAN_MS) };
    };
    if (!EXPORT_ONLY) {
      const full = await list(tenant, {
        start_time: iso(BULK_START),
        end_time: iso(BULK_START + BULK_SPAN_S * 1000),
        page_size: 1,
      });
      log(`bulk tenant total_count ${full.total_count}`);
      await timed(10, () => list(tenant, { ...bulkRange(), page_size: 1 }));
      const count = await timed(200, () => list(tenant, { ...bulkRange(), page_size: 1 }));
      results.push([
        `total_count over ${BULK.toLocaleString("en")} events (page of 1, rollup sum kept)`,
        `p50 ${ms(quantile(count, 50))}`,
        `p99 ${ms(quantile(count, 99))}`,
      ]);
      const filtered = await timed(200, () => list(tenant, { ...bulkRange(), page_size: 1, principal_id: "svc-p3" }));
      results.push([
        "  … with a principal_id filter",
        `p50 ${ms(quantile(filtered, 50))}`,
        `p99 ${ms(quantile(filtered, 99))}`,
      ]);
      // The API keeps the rollup part of a count (its whole minutes) until a batch is indexed: the calls above reuse
      // it after the first. Cold counts: each call's first whole minute is another one (calls i = 1…200 start in
      // minute i), so each sums counts_hour and counts again, as the first count after a newly indexed batch does.
      const coldRange = (i: number) => ({
        ...bulkRange(),
        start_time: iso(BULK_START + i * 60_000 + Math.floor(Math.random() * 59_000) + 500),
      });
      let cold = 0;
      const coldCount = await timed(200, () => list(tenant, { ...coldRange(++cold), page_size: 1 }));
      results.push([
        "  … cold (rollups summed on every call)",
        `p50 ${ms(quantile(coldCount, 50))}`,
        `p99 ${ms(quantile(coldCount, 99))}`,
      ]);
      cold = 0;
      const coldFiltered = await timed(200, () =>
        list(tenant, { ...coldRange(++cold), page_size: 1, principal_id: "svc-p3" }),
      );
      results.push([
        "  … cold, with a principal_id filter",
        `p50 ${ms(quantile(coldFiltered, 50))}`,
        `p99 ${ms(quantile(coldFiltered, 99))}`,
      ]);

      await timed(10, () => list(tenant, { ...realRange(), page_size: 100 }));
      const page = await timed(200, () => list(tenant, { ...realRange(), page_size: 100 }));
      results.push([
        `page of 100 (of ${REAL.toLocaleString("en")} real records, ranged GETs)`,
        `p50 ${ms(quantile(page, 50))}`,
        `p99 ${ms(quantile(page, 99))}`,
      ]);

      // A principal's pages over the bulk days (read through its postings), from random positions.
      const principalRange = () => {
        const start = BULK_START + Math.floor(Math.random() * (BULK_SPAN_S - 3600) * 1000);
        return { start_time: iso(start), end_time: iso(BULK_START + BULK_SPAN_S * 1000) };
      };
      const principalPage = await timed(200, () =>
        list(tenant, { ...principalRange(), page_size: 100, principal_id: "svc-p3" }),
      );
      results.push([
        "page of 100 with a principal_id filter (bulk days, random start)",
        `p50 ${ms(quantile(principalPage, 50))}`,
        `p99 ${ms(quantile(principalPage, 99))}`,
      ]);

      const listPg = await apiBackendsCpu(sql);
      const listMinio = stackServerCpu("minio");
      section("list calls/s");
      const listCpu = process.cpuUsage();
      const load = await listLoad({
        url: `${base}/v2/audit/events`,
        headers: headers(tenant),
        start: REAL_START,
        span: REAL_SPAN_MS,
        window: 600_000,
        concurrency: CONCURRENCY,
        seconds: SECONDS,
      });
      section("");
      const calls = load.calls;
      results.push([
        `list calls/s (page of 100, ${CONCURRENCY} concurrent, client in its own process)`,
        `${(calls / SECONDS).toFixed(0)} /s`,
        `API process CPU ${cpuPer(listCpu, calls, 2)} per call`,
      ]);
      // The blocks a run reads are cold at its start: the last seconds show the rate once they are cached.
      const lastSeconds = Math.min(5, Math.floor(SECONDS / 3));
      if (lastSeconds >= 1 && SECONDS > lastSeconds) {
        const last = load.perSecond.slice(-lastSeconds).reduce((sum, n) => sum + n, 0);
        results.push([
          `  … in the run's last ${lastSeconds} s`,
          `${(last / lastSeconds).toFixed(0)} /s`,
          `first second: ${load.perSecond[0] ?? 0} calls`,
        ]);
      }
      results.push(["  … the client's CPU per list call (list-load.ts)", `${(load.cpuMs / calls).toFixed(2)} ms`, ""]);
      const pgPerCall = (await apiBackendsCpu(sql, listPg.at)).ms / calls;
      results.push(["  … PostgreSQL CPU per list call (the API's backends)", `${pgPerCall.toFixed(2)} ms`, ""]);
      results.push(["  … MinIO CPU per list call", minioPer(listMinio, calls, 2), ""]);
    }

    // Three exports of the same range (the machine is shared: the best and all three are printed).
    const exportRuns: { bytes: number; seconds: number }[] = [];
    const exportPg = await apiBackendsCpu(sql);
    const exportMinio = stackServerCpu("minio");
    section("export");
    const exportCpu = process.cpuUsage();
    const exportBody = JSON.stringify({ start_time: iso(REAL_START), end_time: iso(REAL_START + REAL_SPAN_MS) });
    for (let run = 0; run < 3; run++) {
      exportRuns.push(
        EXPORT_CLIENT === "curl"
          ? await exportWithCurl(`${base}/v2/audit/events/export`, headers(tenant), exportBody)
          : await exportWithFetch(`${base}/v2/audit/events/export`, headers(tenant), exportBody),
      );
    }
    section("");
    const rate = (r: { bytes: number; seconds: number }) => r.bytes / 1048576 / r.seconds;
    const best = exportRuns.reduce((a, b) => (rate(b) > rate(a) ? b : a));
    results.push([
      `export (REST stream to ${EXPORT_CLIENT}, ${(best.bytes / 1048576).toFixed(1)} MiB, best of 3)`,
      `${rate(best).toFixed(1)} MiB/s`,
      `${best.seconds.toFixed(2)} s (all: ${exportRuns.map((r) => rate(r).toFixed(1)).join(", ")} MiB/s)`,
    ]);
    const exportedMiB = exportRuns.reduce((sum, r) => sum + r.bytes, 0) / 1048576;
    results.push(["  … process CPU per MiB exported", cpuPer(exportCpu, exportedMiB, 1), ""]);
    const pgPerMiB = (await apiBackendsCpu(sql, exportPg.at)).ms / exportedMiB;
    results.push(["  … PostgreSQL CPU per MiB exported", `${pgPerMiB.toFixed(1)} ms`, ""]);
    results.push(["  … MinIO CPU per MiB exported", minioPer(exportMinio, exportedMiB, 1), ""]);

    if (!EXPORT_ONLY) {
      const apiCount = await timed(20, () =>
        list(tenant, {
          start_time: iso(REAL_START + 1_000),
          end_time: iso(REAL_START + REAL_SPAN_MS - 1_000),
          page_size: 1,
        }),
      );
      results.push([
        `API count of the ${REAL.toLocaleString("en")} real records`,
        `p50 ${ms(quantile(apiCount, 50))}`,
        "",
      ]);
      if (!args["no-duckdb"]) {
        const python = join(VENV, "bin/python");
        if (!(await Bun.file(python).exists())) {
          log(`installing duckdb ${DUCKDB_VERSION} into ${VENV}…`);
          Bun.spawnSync(["python3", "-m", "venv", VENV]);
          Bun.spawnSync([join(VENV, "bin/pip"), "install", "-q", `duckdb==${DUCKDB_VERSION}`]);
        }
        // Python is indented by meaning: the script's lines are joined, not indented with the TypeScript around it.
        const script = [
          "import duckdb, sys, time",
          "con = duckdb.connect()",
          `q = """SELECT count(*) FROM read_json('${join(dir, "objects")}/*.jsonl', format='newline_delimited')`,
          `       WHERE tenant_id = ? AND time >= ?::TIMESTAMPTZ AND time < ?::TIMESTAMPTZ"""`,
          `args = ['${tenant}', '${iso(REAL_START + 1_000)}', '${iso(REAL_START + REAL_SPAN_MS - 1_000)}']`,
          "best = None",
          "for _ in range(3):",
          "    t = time.perf_counter(); n = con.execute(q, args).fetchone()[0]; d = time.perf_counter() - t",
          "    best = d if best is None or d < best else best",
          "print(n, best * 1000)",
        ].join("\n");
        const run = Bun.spawnSync([python, "-c", script]);
        const [n, best] = run.stdout.toString().trim().split(" ");
        if (run.exitCode === 0) {
          results.push([
            `DuckDB read_json count of the same records (local files, best of 3)`,
            ms(Number(best)),
            `count ${n}`,
          ]);
        } else {
          // The peer's row is part of the result: a failed peer shows in the table and the exit code, not only in a log.
          log(`duckdb failed: ${run.stderr.toString().slice(0, 500)}`);
          results.push(["DuckDB read_json count of the same records", "FAILED", "see the log above"]);
          process.exitCode = 1;
        }
      }
    }
    const freshSeconds = Number(args["fresh-seconds"]);
    if (freshSeconds > 0) {
      await api.stop();
      const rate = Number(args["fresh-rate"]);
      log(`freshness: producing ${rate}/s for ${freshSeconds} s…`);
      const fresh = await measureFreshness({
        rate,
        seconds: freshSeconds,
        apiEnv,
        tenant,
        bearer: `Bearer ${token.access_token}`,
      });
      results.push([
        `freshness written → listed at ${rate}/s (achieved ${fresh.achieved.toFixed(0)}/s, ${fresh.samples} probes, ${fresh.missing} unseen)`,
        `p50 ${ms(fresh.p50)}`,
        `p99 ${ms(fresh.p99)} (max ${ms(fresh.max)})`,
      ]);
    }
  } finally {
    await api.stop();
  }
  const width = Math.max(...results.map((r) => r[0].length));
  console.log(`\naudit API bench (auth on, ${new Date().toISOString()})`);
  for (const [what, a, b] of results) console.log(`${what.padEnd(width)}  ${a.padEnd(16)}  ${b}`);
} finally {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql.close();
  s3.destroy();
  await realm.remove().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
