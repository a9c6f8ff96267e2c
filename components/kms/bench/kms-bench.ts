// `bun run bench:kms [--seconds 10] [--concurrency 64] [--channels 2] [--rounds 1] [--clients sdk,h2load]`:
// the KMS's goals (issue 11) on this machine.
// Workload: a real KMS (src/main.ts: TLS on, auth on against a Keycloak realm of its own, PostgreSQL key store in a
// schema of its own), restarted --rounds times, loaded by each of --clients: `sdk` = @svc/sdk clients in this Bun
// process (what a Bun user sees), `h2load` = nghttp2's h2load replaying one request body (a ceiling probe, not a gRPC
// client: see h2load-load.ts). All over TLS (the SDK checks the exported CA), with a keymanager token; Encrypt of a
// 4 KiB payload, then Decrypt of a 4 KiB ciphertext, each for --seconds with --concurrency calls in flight over
// --channels HTTP/2 connections. Per row: CPU per call of the KMS (from /proc) and of the client, and the KMS's own
// count of the calls by status code (its /metrics, server-calls.ts): a row whose client counted more successes than
// the KMS answered OK, or any call of which the KMS refused, is INVALID and the bench exits 1. Unseal at start: the
// KMS's own measure (scrypt + unwrap, logged as unsealMs) at a restart of a bootstrapped store.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyKind, KmsServiceService } from "@svc/proto";
import { createClient, type SvcClient } from "@svc/sdk";
import { ensureTool, randomName, seedTestRealm, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import { accessToken, grantRole } from "../test/support/kms-fixture.ts";
import { runH2load } from "./h2load-load.ts";
import { checkServerCalls, serverCalls } from "./server-calls.ts";

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name}: a positive number`);
  return value;
}

function listFlag(name: string, fallback: string): string[] {
  const index = process.argv.indexOf(`--${name}`);
  return (index >= 0 ? (process.argv[index + 1] ?? "") : fallback).split(",").filter((item) => item !== "");
}

const seconds = flag("seconds", 10);
const concurrency = flag("concurrency", 64);
const channels = flag("channels", 2);
const rounds = flag("rounds", 1);
const clientKinds = listFlag("clients", "sdk,h2load");
if (clientKinds.some((kind) => !["sdk", "h2load"].includes(kind))) throw new Error("--clients: sdk,h2load");

const SERVICE = "/svc.kms.v1.KmsService";

interface Started {
  child: ReturnType<typeof Bun.spawn>;
  grpcPort: number;
  /** The admin HTTPS port: /metrics, the KMS's own count of the calls by status code. */
  httpPort: number;
  unsealMs: number;
  spawnToServingMs: number;
}

async function startKms(env: Record<string, string>): Promise<Started> {
  const spawnedAt = performance.now();
  // KMS_BENCH_BUN_FLAGS (e.g. "--cpu-prof-md --cpu-prof-dir=/tmp/kms-prof") profiles the KMS process
  const flags = (process.env.KMS_BENCH_BUN_FLAGS ?? "").split(" ").filter((item) => item !== "");
  const child = Bun.spawn([process.execPath, ...flags, "run", join(import.meta.dir, "../src/main.ts")], {
    env: { ...process.env, ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  const reader = (child.stderr as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the KMS exited before it served:\n${buffered}`);
    buffered += decoder.decode(value, { stream: true });
    const line = buffered.split("\n").find((candidate) => candidate.includes('"kms started"'));
    if (!line) continue;
    const fields = JSON.parse(line) as { grpcPort: number; httpPort: number; unsealMs: number };
    // keep draining the KMS's log so its stderr never blocks it
    void (async () => {
      while (!(await reader.read()).done) {}
    })().catch(() => {});
    return {
      child,
      grpcPort: fields.grpcPort,
      httpPort: fields.httpPort,
      unsealMs: fields.unsealMs,
      spawnToServingMs: performance.now() - spawnedAt,
    };
  }
}

async function stopKms(started: Started): Promise<void> {
  started.child.kill("SIGTERM");
  await started.child.exited;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (clock ticks of 1/100 s). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds the KMS process used so far. */
const kmsCpuSeconds = (kms: Started) => cpuSecondsOf(kms.child.pid);

/** The CA the KMS exported at its first start (kept in its key store, so the same at every restart); read once. */
let caPem: string | undefined;

/** The KMS's calls of `method` so far by status code, from its /metrics (TLS checked against the exported CA). */
async function kmsCalls(kms: Started, method: string): Promise<Map<string, number>> {
  caPem ??= await Bun.file(caPath).text();
  return serverCalls(`https://127.0.0.1:${kms.httpPort}/metrics`, caPem, method);
}

interface Row {
  name: string;
  calls: number;
  perSecond: number;
  p50: string;
  p99: string;
  errors: number;
  /** Calls the KMS answered OK during the row (its /metrics), and the other codes it sent. */
  serverOk: number;
  serverOther: string;
  /** The KMS answered OK at least every call the client counted, and refused none (server-calls.ts). */
  valid: boolean;
  /** Cores the KMS process kept busy. */
  serverCores: string;
  clientCores: string;
  serverUsPerCall: number;
  clientUsPerCall: number;
}

async function load(
  method: string,
  kms: Started,
  clients: SvcClient[],
  call: (client: SvcClient) => Promise<unknown>,
): Promise<Row> {
  const callsBefore = await kmsCalls(kms, `${SERVICE}/${method}`);
  const serverCpuBefore = await kmsCpuSeconds(kms);
  const clientCpuBefore = process.cpuUsage();
  const latencies: number[] = [];
  let errors = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, index) => {
      const client = clients[index % clients.length] as SvcClient;
      while (performance.now() < until) {
        const t0 = performance.now();
        try {
          await call(client);
          latencies.push(performance.now() - t0);
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const serverCpu = (await kmsCpuSeconds(kms)) - serverCpuBefore;
  const clientUsage = process.cpuUsage(clientCpuBefore);
  const clientCpu = (clientUsage.user + clientUsage.system) / 1e6;
  const server = checkServerCalls(
    callsBefore,
    await kmsCalls(kms, `${SERVICE}/${method}`),
    latencies.length,
    concurrency,
  );
  latencies.sort((a, b) => a - b);
  return {
    name: `${method} 4 KiB`,
    calls: latencies.length,
    perSecond: Math.round(latencies.length / elapsed),
    p50: percentile(latencies, 0.5).toFixed(2),
    p99: percentile(latencies, 0.99).toFixed(2),
    errors,
    serverOk: server.ok,
    serverOther: server.other,
    valid: server.valid,
    // CPU cores busy on average: the KMS process and this client process (2 cores on the machine, shared)
    serverCores: (serverCpu / elapsed).toFixed(2),
    clientCores: (clientCpu / elapsed).toFixed(2),
    serverUsPerCall: Math.round((serverCpu * 1e6) / Math.max(1, latencies.length)),
    clientUsPerCall: Math.round((clientCpu * 1e6) / Math.max(1, latencies.length)),
  };
}

/** The same call's request body sent by h2load (a ceiling probe: see h2load-load.ts). */
async function loadH2load(
  method: string,
  kms: Started,
  h2load: string,
  headers: Record<string, string>,
  message: Uint8Array,
): Promise<Row> {
  const callsBefore = await kmsCalls(kms, `${SERVICE}/${method}`);
  const serverCpuBefore = await kmsCpuSeconds(kms);
  const result = await runH2load({
    h2load,
    url: `https://127.0.0.1:${kms.grpcPort}${SERVICE}/${method}`,
    message,
    headers,
    seconds,
    concurrency,
    connections: channels,
    dir,
  });
  const serverCpu = (await kmsCpuSeconds(kms)) - serverCpuBefore;
  const server = checkServerCalls(
    callsBefore,
    await kmsCalls(kms, `${SERVICE}/${method}`),
    result.calls,
    result.inFlight, // h2load's streams × connections: more than --concurrency when it does not divide evenly
  );
  const calls = Math.max(1, result.calls);
  return {
    name: `${method} 4 KiB`,
    calls: result.calls,
    perSecond: result.perSecond,
    p50: `mean ${result.meanMs.toFixed(2)}`,
    p99: `max ${result.maxMs.toFixed(0)}`,
    errors: result.errors,
    serverOk: server.ok,
    serverOther: server.other,
    valid: server.valid,
    serverCores: (serverCpu / result.elapsedSeconds).toFixed(2),
    clientCores: (result.cpuSeconds / result.elapsedSeconds).toFixed(2),
    serverUsPerCall: Math.round((serverCpu * 1e6) / calls),
    clientUsPerCall: Math.round((result.cpuSeconds * 1e6) / calls),
  };
}

const stack = stackEnv();
const dir = mkdtempSync(join(tmpdir(), "kms-bench-"));
const caPath = join(dir, "ca.pem");
const schema = randomName("bench_kms").replaceAll("-", "_");
const realm = await seedTestRealm("kmsbench");
const sql = new SQL(stack.postgresUrl);
// h2load: Debian's nghttp2-client, installed on first use (root) like the other Debian tools of ops/stack
const h2load = clientKinds.includes("h2load") ? await ensureTool("h2load") : "";
let running: Started | undefined;
try {
  await grantRole(realm, "app", "keymanager");
  const env = {
    SVC_KMS_PORT: "0",
    SVC_KMS_HOST: "127.0.0.1",
    SVC_KMS_HTTP_PORT: "0",
    SVC_KMS_HTTP_HOST: "127.0.0.1",
    SVC_KMS_PG_URL: stack.postgresUrl,
    SVC_KMS_PG_SCHEMA: schema,
    SVC_KMS_PASSPHRASE: `bench-${randomName("pass")}`,
    SVC_KMS_BOOTSTRAP: "if-empty",
    SVC_KMS_CA_EXPORT_PATH: caPath,
    SVC_AUDIT_LOG_FILE: join(dir, "audit.jsonl"),
    SVC_AUTH_ISSUER: realm.issuer,
    SVC_KMS_LOG_LEVEL: "info",
  };
  const first = await startKms(env); // bootstrap + unseal
  await stopKms(first);
  const payload = Buffer.alloc(4096, 7);
  let ciphertext: Buffer | undefined;
  const rows: (Row & { round: number; client: string })[] = [];
  const restarts: { round: number; unsealMs: number; spawnToServingMs: number }[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    // a restart of a bootstrapped store: what every later start costs
    running = await startKms(env);
    const kms = running;
    // a fresh token each round: Keycloak's expire in 300 s, shorter than a run of several rounds
    const token = await accessToken(realm, "app");
    restarts.push({ round, unsealMs: kms.unsealMs, spawnToServingMs: kms.spawnToServingMs });
    const clients = Array.from({ length: channels }, () =>
      createClient({
        address: "127.0.0.1:1",
        secure: false,
        access_token: token,
        tenant_id: realm.seed.tenantId,
        kms_address: `127.0.0.1:${kms.grpcPort}`,
        kms_ca_cert: caPath,
      }),
    );
    const admin = clients[0] as SvcClient;
    if (!ciphertext) {
      await admin.kmsGenerateKey({ name: "bench", kind: KeyKind.KEY_KIND_AES_256_GCM });
      ciphertext = (await admin.kmsEncrypt({ name: "bench", plaintext: payload })).ciphertext;
    }
    const sealed = ciphertext;
    const tag = { round };
    if (clientKinds.includes("sdk")) {
      for (const client of clients) await client.kmsEncrypt({ name: "bench", plaintext: payload }); // warm channels
      rows.push({
        ...tag,
        client: "sdk",
        ...(await load("Encrypt", kms, clients, (client) => client.kmsEncrypt({ name: "bench", plaintext: payload }))),
      });
      rows.push({
        ...tag,
        client: "sdk",
        ...(await load("Decrypt", kms, clients, (client) => client.kmsDecrypt({ name: "bench", ciphertext: sealed }))),
      });
    }
    for (const client of clients) client.close();
    if (clientKinds.includes("h2load")) {
      const headers = { authorization: `Bearer ${token}`, "x-tenant-id": realm.seed.tenantId };
      const encrypt = KmsServiceService.encrypt.requestSerialize({
        name: "bench",
        plaintext: payload,
        associatedData: Buffer.alloc(0),
      });
      const decrypt = KmsServiceService.decrypt.requestSerialize({
        name: "bench",
        ciphertext: sealed,
        associatedData: Buffer.alloc(0),
      });
      rows.push({
        ...tag,
        client: "h2load",
        ...(await loadH2load("Encrypt", kms, h2load, headers, encrypt)),
      });
      rows.push({
        ...tag,
        client: "h2load",
        ...(await loadH2load("Decrypt", kms, h2load, headers, decrypt)),
      });
    }
    await stopKms(kms);
    running = undefined;
  }
  const loadAverage = (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
  console.log(
    `KMS bench: TLS + auth on, ${concurrency} calls in flight over ${channels} connections, ${seconds} s each, ` +
      `${rounds} round(s) (a KMS restart each), load average ${loadAverage}`,
  );
  console.table(
    rows.map((row) => ({
      round: row.round,
      client: row.client,
      call: row.name,
      "calls/s": row.perSecond,
      "p50 ms": row.p50,
      "p99 ms": row.p99,
      calls: row.calls,
      errors: row.errors,
      "KMS OK": row.serverOk,
      "KMS other codes": row.serverOther,
      valid: row.valid ? "yes" : "NO",
      "KMS cores": row.serverCores,
      "KMS µs CPU/call": row.serverUsPerCall,
      "client cores": row.clientCores,
      "client µs CPU/call": row.clientUsPerCall,
      "goal ≥ 5000/s": row.perSecond >= 5000 ? "met" : "NOT met",
    })),
  );
  console.table([
    {
      start: "first (bootstrap + unseal)",
      "unseal ms": Math.round(first.unsealMs),
      "spawn → serving ms": Math.round(first.spawnToServingMs),
    },
    ...restarts.map((restart) => ({
      start: `restart (unseal), round ${restart.round}`,
      "unseal ms": Math.round(restart.unsealMs),
      "spawn → serving ms": Math.round(restart.spawnToServingMs),
      "goal ≤ 1000 ms": restart.unsealMs <= 1000 ? "met" : "NOT met",
    })),
  ]);
  const invalid = rows.filter((row) => !row.valid);
  if (invalid.length > 0) {
    const named = invalid.map((row) => `${row.client} ${row.name} (round ${row.round})`).join("; ");
    console.error(`INVALID: the KMS did not answer OK every call its client counted, or refused some: ${named}`);
    process.exitCode = 1;
  }
} finally {
  if (running) await stopKms(running);
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql.close();
  await realm.remove();
  rmSync(dir, { recursive: true, force: true });
}
