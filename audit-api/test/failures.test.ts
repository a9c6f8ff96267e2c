/**
 * What goes wrong around the query core, on the real stack with auth disabled (spec: test environments): gzip
 * objects, an index that names the wrong bytes or a missing object version, S3 not answering, an index schema that
 * is not there, an unreachable PostgreSQL, the export byte limit, and main's start and SIGTERM.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { credentials, type ServiceError, status } from "@grpc/grpc-js";
import { type HealthCheckResponse, HealthCheckResponse_ServingStatus, HealthClient } from "@svc/proto";
import { hangUpListener, inTempDir, randomName, rejectionOf } from "@svc/testkit";
import { pino } from "pino";
import { type AuditApi, AuditApiError, BLOCK_BYTES, DiskBlocks, parseAuditApiConfig, startAuditApi } from "../index.ts";
import {
  AUTH_DISABLED,
  apiEnv,
  insertIndexRows,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const storage = testStorage("fail");
const { names, sql, s3 } = storage;
const T0 = Date.parse("2026-04-01T08:00:00Z");
const RANGE = { start_time: "2026-04-01T00:00:00Z", end_time: "2026-04-02T00:00:00Z" };
const started: AuditApi[] = [];
let api: AuditApi;

async function start(schema: string, extra: Record<string, string> = {}): Promise<AuditApi> {
  const config = parseAuditApiConfig(apiEnv(schema, { ...AUTH_DISABLED, ...extra }));
  const instance = await startAuditApi(config, { logger: pino({ level: "silent" }) });
  started.push(instance);
  return instance;
}

async function list(on: AuditApi, tenantId: string | undefined, body: unknown = RANGE) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (tenantId !== undefined) headers["x-tenant-id"] = tenantId;
  const response = await fetch(`http://127.0.0.1:${on.restPort}/v2/audit/events`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const errorCode = (body: Record<string, unknown>) => (body.error as { code: string }).code;

beforeAll(async () => {
  await storage.create();
  api = await start(names.schema, { SVC_AUDIT_API_MAX_EXPORT_BYTES: "1024" });
});

afterAll(async () => {
  for (const instance of started) await instance.stop();
  await storage.remove();
});

test("auth disabled: x-tenant-id alone selects the tenant; without it the call is refused", async () => {
  const tenant = randomName("tenant");
  await storeBatch(sql, s3, names, sealBatch(names.topic, 0, 0n, [sampleRecord(randomName("ev"), tenant, T0)]));
  expect((await list(api, tenant)).body.total_count).toBe(1);
  expect((await list(api, randomName("tenant"))).body.total_count).toBe(0);
  const missing = await list(api, undefined);
  expect(missing.status).toBe(403);
  expect(errorCode(missing.body)).toBe("AUTH_TENANT_HEADER_MISSING");
});

test("gzip objects are read whole and decoded", async () => {
  const tenant = randomName("tenant");
  const records = Array.from({ length: 5 }, (_, i) =>
    sampleRecord(`gz-${i}-${randomName("e")}`, tenant, T0 + i * 1000),
  );
  expect(await storeBatch(sql, s3, names, sealBatch(names.topic, 1, 0n, records), "gzip")).toBe(5);
  const { status, body } = await list(api, tenant, { ...RANGE, page_size: 3 });
  expect(status).toBe(200);
  expect(body.total_count).toBe(5);
  expect(body.events).toEqual(records.slice(0, 3) as unknown as Record<string, unknown>[]);
});

test("lines whose id is not the first member or needs escaping pass the id check (by a parse), in lists and exports", async () => {
  const tenant = randomName("tenant");
  const { id: firstId, ...rest } = sampleRecord(`later-${randomName("e")}`, tenant, T0);
  const reordered = { ...rest, id: firstId } as TestRecord; // "id" last
  const quoted = sampleRecord(`q"uote-\u00e9-${randomName("e")}`, tenant, T0 + 1);
  const plain = sampleRecord(`plain-${randomName("e")}`, tenant, T0 + 2);
  await storeBatch(sql, s3, names, sealBatch(names.topic, 3, 0n, [reordered, quoted, plain]));
  const { status, body } = await list(api, tenant, { ...RANGE, page_size: 10 });
  expect(status).toBe(200);
  expect(body.events).toEqual([reordered, quoted, plain] as unknown as Record<string, unknown>[]);
  const exported = await api.queries.export(tenant, { start: RANGE.start_time, end: RANGE.end_time });
  expect(new TextDecoder().decode(exported.data)).toBe(
    `${[reordered, quoted, plain].map((r) => JSON.stringify(r)).join("\n")}\n`,
  );
});

async function indexRow(tenant: string, id: string, objectId: string, byteStart: number, byteLength: number) {
  await insertIndexRows(
    sql,
    names.schema,
    `SELECT $1, $2, $3::timestamptz, 'p', 'a', 'OK', 'r', $4::bigint, $5::bigint, $6::int`,
    [id, tenant, new Date(T0).toISOString(), objectId, byteStart, byteLength],
  );
}

test("an index row naming bytes that do not hold its event: 500 AUDIT_API_OBJECT_READ_FAILED", async () => {
  const tenant = randomName("tenant");
  const records: TestRecord[] = [
    sampleRecord(randomName("ev"), tenant, T0),
    sampleRecord(randomName("ev"), tenant, T0),
  ];
  await storeBatch(sql, s3, names, sealBatch(names.topic, 2, 0n, records));
  const [row] = (await sql.unsafe(
    `SELECT object_id::text AS object_id, byte_length FROM "${names.schema}".events WHERE id = $1`,
    [records[1]?.id],
  )) as { object_id: string; byte_length: number }[];
  if (!row) throw new Error("the stored event is not indexed");
  await indexRow(randomName("t2"), "x", row.object_id, 0, row.byte_length); // another tenant: not ours
  const wrong = randomName("wrong");
  await indexRow(tenant, wrong, row.object_id, 0, row.byte_length); // the bytes of records[0]
  const { status, body } = await list(api, tenant);
  expect(status).toBe(500);
  expect(errorCode(body)).toBe("AUDIT_API_OBJECT_READ_FAILED");
  expect((body.error as { message: string }).message).toContain(wrong);
});

test("an object version that is not there: 500 AUDIT_API_OBJECT_READ_FAILED (a 404 is not retried)", async () => {
  const tenant = randomName("tenant");
  const [object] = (await sql.unsafe(
    `INSERT INTO "${names.schema}".objects (bucket, key, version_id, topic, partition, first_offset, last_offset,
       records, bytes) VALUES ('svc-audit', $1, 'no-such-version', 't', 0, 0, 0, 1, 100)
     RETURNING object_id::text AS object_id`,
    [`${names.keyPrefix}missing.jsonl`],
  )) as { object_id: string }[];
  await indexRow(tenant, randomName("ev"), object?.object_id ?? "0", 0, 50);
  const { status, body } = await list(api, tenant);
  expect(status).toBe(500);
  expect(errorCode(body)).toBe("AUDIT_API_OBJECT_READ_FAILED");
});

test("an index row naming an object the index does not hold: 500 AUDIT_API_INDEX_FAILED, naming the event", async () => {
  const tenant = randomName("tenant");
  const orphan = randomName("orphan");
  await indexRow(tenant, orphan, "987654321987", 0, 10);
  const { status, body } = await list(api, tenant);
  expect(status).toBe(500);
  expect(errorCode(body)).toBe("AUDIT_API_INDEX_FAILED");
  expect((body.error as { message: string }).message).toContain(orphan);
});

test("S3 not answering (a listener that hangs up): 503 AUDIT_API_OBJECT_READ_FAILED (retriable)", async () => {
  const tenant = randomName("tenant");
  await storeBatch(sql, s3, names, sealBatch(names.topic, 4, 0n, [sampleRecord(randomName("ev"), tenant, T0)]));
  const listener = hangUpListener();
  try {
    const cut = await start(names.schema, { SVC_AUDIT_S3_ENDPOINT: listener.url });
    const { status, body } = await list(cut, tenant);
    expect(status).toBe(503);
    expect(errorCode(body)).toBe("AUDIT_API_OBJECT_READ_FAILED");
  } finally {
    listener.stop();
  }
});

test("an export above the byte limit is refused with AUDIT_API_EXPORT_TOO_LARGE; a smaller range passes", async () => {
  const tenant = randomName("tenant");
  const records = Array.from({ length: 6 }, (_, i) => sampleRecord(`big-${i}-${randomName("e")}`, tenant, T0 + i));
  await storeBatch(sql, s3, names, sealBatch(names.topic, 3, 0n, records));
  const error = await rejectionOf(
    api.queries.export(tenant, { start: RANGE.start_time, end: RANGE.end_time }),
    AuditApiError,
  );
  expect(error.code).toBe("AUDIT_API_EXPORT_TOO_LARGE");
  expect(error.message).toContain("1024 bytes");
  const small = await api.queries.export(tenant, { start: RANGE.start_time, end: new Date(T0 + 2).toISOString() });
  expect(small.totalCount).toBe(2);
});

test("an index schema that does not exist: 500 AUDIT_API_INDEX_FAILED (not retriable)", async () => {
  const absent = await start(randomName("t_api_absent").replaceAll("-", "_"));
  const { status, body } = await list(absent, "t");
  expect(status).toBe(500);
  expect(errorCode(body)).toBe("AUDIT_API_INDEX_FAILED");
});

test("PostgreSQL unreachable: 503 AUDIT_API_INDEX_FAILED (retriable)", async () => {
  const down = await start(names.schema, { SVC_AUDIT_PG_URL: "postgres://svc:x@127.0.0.1:1/svc" });
  const { status, body } = await list(down, "t");
  expect(status).toBe(503);
  expect(errorCode(body)).toBe("AUDIT_API_INDEX_FAILED");
});

test("main: serves once started, stops with exit 0 on SIGTERM; exits 1 when auth's start-up check fails", async () => {
  const env = {
    PATH: process.env.PATH ?? "",
    ...apiEnv(names.schema, { ...AUTH_DISABLED, SVC_AUDIT_LOG_LEVEL: "info" }),
  };
  const child = Bun.spawn(["bun", "run", `${import.meta.dir}/../src/main.ts`], { env, stdout: "pipe", stderr: "pipe" });
  const reader = child.stdout.getReader();
  let text = "";
  let restPort: number | undefined;
  while (restPort === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`main ended before it started: ${text}`);
    text += new TextDecoder().decode(value);
    const line = text.split("\n").find((l) => l.includes('"audit-api started"'));
    if (line) restPort = (JSON.parse(line) as { restPort: number }).restPort;
  }
  const health = await fetch(`http://127.0.0.1:${restPort}/health`);
  expect(health.status).toBe(200);
  child.kill("SIGTERM");
  expect(await child.exited).toBe(0);

  const failing = Bun.spawn(["bun", "run", `${import.meta.dir}/../src/main.ts`], {
    env: { ...env, SVC_AUTH_DISABLED: "false", SVC_AUTH_ISSUER: "http://127.0.0.1:1/realms/none" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await failing.exited).toBe(1);
});

test("grpc.health.v1: SERVING for the server and the audit service, NOT_FOUND for another name; watch and list", async () => {
  const client = new HealthClient(`127.0.0.1:${api.grpcPort}`, credentials.createInsecure());
  try {
    const check = (service: string) =>
      new Promise<HealthCheckResponse>((resolve, reject) =>
        client.check({ service }, (error, answer) => (error ? reject(error) : resolve(answer))),
      );
    expect((await check("")).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await check("audit.v2.AuditService")).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const unknown = (await rejectionOf(check("other.Service"), Error)) as ServiceError;
    expect(unknown.code).toBe(status.NOT_FOUND);
    const listed = await new Promise<Record<string, HealthCheckResponse>>((resolve, reject) =>
      client.list({}, (error, answer) => (error ? reject(error) : resolve(answer.statuses))),
    );
    expect(Object.keys(listed).sort()).toEqual(["", "audit.v2.AuditService"]);
    const watch = client.watch({ service: "audit.v2.AuditService" });
    const first = await new Promise<HealthCheckResponse>((resolve) => watch.once("data", resolve));
    expect(first.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    watch.on("error", () => {}); // the cancellation below ends it with CANCELLED
    watch.cancel();
  } finally {
    client.close();
  }
});

test("a taken REST port fails the start with AUDIT_API_LISTEN_FAILED naming SVC_AUDIT_REST_PORT (not shared)", async () => {
  // The holder allows port sharing, as another replica listening through Elysia's default would.
  const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, reusePort: true, fetch: () => new Response("other") });
  try {
    const error = await rejectionOf(start(names.schema, { SVC_AUDIT_REST_PORT: String(holder.port) }), AuditApiError);
    expect(error).toBeInstanceOf(AuditApiError);
    expect(error.code).toBe("AUDIT_API_LISTEN_FAILED");
    expect(error.subject).toBe("SVC_AUDIT_REST_PORT");
    expect(await (await fetch(`http://127.0.0.1:${holder.port}/health`)).text()).toBe("other");
  } finally {
    holder.stop(true);
  }
});

test("the block cache's disk tier: a list's blocks land in its directory; an unusable one fails the start (AUDIT_API_DISK_CACHE_FAILED)", () =>
  inTempDir("api-blocks", async (dir) => {
    const tenant = randomName("tenant");
    const records = [sampleRecord(randomName("ev"), tenant, T0), sampleRecord(randomName("ev"), tenant, T0 + 1)];
    await storeBatch(sql, s3, names, sealBatch(names.topic, 2, 0n, records));
    const blocks = join(dir, "blocks");
    const withDisk = await start(names.schema, { SVC_AUDIT_API_DISK_CACHE_DIR: blocks });
    const { status, body } = await list(withDisk, tenant);
    expect(status).toBe(200);
    expect(body.events).toEqual(records as unknown as Record<string, unknown>[]);
    await withDisk.stop();
    // Stopped after its write: the next process over the directory finds the page's block.
    const kept = await DiskBlocks.open(blocks, { maxBytes: 1 << 20, blockBytes: BLOCK_BYTES, report: () => {} });
    expect(kept.count).toBe(1);
    await kept.close();

    const file = join(dir, "a-file");
    writeFileSync(file, "");
    const error = await rejectionOf(
      start(names.schema, { SVC_AUDIT_API_DISK_CACHE_DIR: join(file, "blocks") }),
      AuditApiError,
    );
    expect(error.code).toBe("AUDIT_API_DISK_CACHE_FAILED");
    expect(error.subject).toBe("SVC_AUDIT_API_DISK_CACHE_DIR");
  }));
