/**
 * The audit API against the real stack: records written through the writer's own path (PUT under Object Lock +
 * index transaction) into a schema and key prefix of this file, tokens from a Keycloak realm of this file, the
 * API's REST and gRPC servers on port 0.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import {
  AuditServiceClient,
  type ExportEventsRequest,
  type ExportEventsResponse,
  type ExportEventsStreamRequest,
  type ExportEventsStreamResponse,
  type ListEventsRequest,
  type ListEventsResponse,
} from "@svc/proto";
import { rejectionOf, type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { pino } from "pino";
import { type AuditApi, parseAuditApiConfig, startAuditApi } from "../index.ts";
import { apiEnv, byTimeThenId, sealBatch, storeBatch, type TestRecord, testStorage } from "./support/stored-data.ts";

const storage = testStorage("main");
const { names, sql, s3 } = storage;
const OTHER_TENANT = "other-tenant";
const BASE_MS = Date.parse("2026-03-01T10:00:20Z");
const ACTIONS = ["/audit.v2.AuditService/list_events", "/svc.Endpoint/Search", "/kms.Keys/Rotate"];
const RESULTS = ["OK", "PERMISSION_DENIED"];
const PRINCIPALS = ["svc-security", "svc-app", ""];

let realm: SeededRealm;
let api: AuditApi;
let replica: AuditApi;
let tenant: string;
let mine: TestRecord[];
let theirs: TestRecord[];
let fullAuth: string;
let readOnlyAuth: string;

function record(i: number, tenantId: string, timeMs: number): TestRecord {
  return {
    id: `${tenantId === OTHER_TENANT ? "zz" : "ev"}-${String(i).padStart(5, "0")}`,
    time: new Date(timeMs).toISOString(),
    source: "endpoint",
    action: ACTIONS[i % ACTIONS.length] as string,
    resource: i % 4 === 0 ? `index/products-${i}` : `key/k-${i}`,
    result: RESULTS[i % 5 === 0 ? 1 : 0] as string,
    duration_ms: i / 10,
    claimed_tenant_id: tenantId,
    principal_id: PRINCIPALS[i % PRINCIPALS.length] as string,
    tenant_id: tenantId,
  };
}

async function bearer(user: string, scope?: string): Promise<string> {
  const { url, realm: name, clientId, userPassword } = realm.seed;
  return `Bearer ${(await issueToken({ url, realm: name, clientId }, { user, password: userPassword, scope })).access_token}`;
}

beforeAll(async () => {
  realm = await seedTestRealm("audit-api");
  tenant = realm.seed.tenantId;
  await storage.create();
  // 240 events of this tenant over about 6.5 minutes (ties every 8th: same time, ids decide), 30 of another.
  mine = [];
  let t = BASE_MS;
  for (let i = 0; i < 240; i++) {
    if (i % 8 !== 7) t += 1_637;
    mine.push(record(i, tenant, t));
  }
  theirs = Array.from({ length: 30 }, (_, i) => record(i, OTHER_TENANT, BASE_MS + i * 9_000));
  // Three partitions, tenants interleaved, each partition's batch in two objects.
  for (let p = 0; p < 3; p++) {
    const part = [...mine.filter((_, i) => i % 3 === p), ...theirs.filter((_, i) => i % 3 === p)];
    const half = Math.ceil(part.length / 2);
    await storeBatch(sql, s3, names, sealBatch(names.topic, p, 0n, part.slice(0, half)));
    await storeBatch(sql, s3, names, sealBatch(names.topic, p, BigInt(half), part.slice(half)));
  }
  mine.sort(byTimeThenId);
  const config = parseAuditApiConfig(
    apiEnv(names.schema, {
      SVC_AUDIT_API_MAX_PAGE_SIZE: "100",
      SVC_AUDIT_API_MAX_EXPORT_EVENTS: "200",
      SVC_AUDIT_API_RANGE_MERGE_BYTES: "256",
      SVC_AUTH_ISSUER: realm.issuer,
    }),
  );
  api = await startAuditApi(config, { logger: pino({ level: "silent" }) });
  replica = await startAuditApi(config, { logger: pino({ level: "silent" }) });
  fullAuth = await bearer("security", "audit:read audit:export");
  readOnlyAuth = await bearer("security", "audit:read");
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await replica?.stop();
  await storage.remove();
  await realm?.remove();
});

async function rest(body: unknown, options: { auth?: string; tenantId?: string; on?: AuditApi } = {}) {
  const response = await fetch(`http://127.0.0.1:${(options.on ?? api).restPort}/v2/audit/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-tenant-id": options.tenantId ?? tenant,
      authorization: options.auth ?? fullAuth,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const iso = (ms: number) => new Date(ms).toISOString();
const inRange = (from: number, to: number, filter: (r: TestRecord) => boolean = () => true) =>
  mine.filter((r) => Date.parse(r.time) >= from && Date.parse(r.time) < to && filter(r));

describe("REST POST /v2/audit/events", () => {
  test.each([
    ["the whole data", BASE_MS - 60_000, BASE_MS + 3_600_000],
    ["partial minutes at both ends", BASE_MS + 7_000, BASE_MS + 301_500],
    ["inside one minute", BASE_MS + 50_000, BASE_MS + 70_000],
    ["exact minute bounds", Date.parse("2026-03-01T10:01:00Z"), Date.parse("2026-03-01T10:04:00Z")],
    ["an empty range", BASE_MS, BASE_MS],
  ])("total_count is exact over %s", async (_what, from, to) => {
    const { status, body } = await rest({ start_time: iso(from), end_time: iso(to), page_size: 5 });
    expect(status).toBe(200);
    expect(body.total_count).toBe(inRange(from, to).length);
  });

  test("pages cover the range exactly once, in (time, id) order, and each page is the stored records", async () => {
    const from = BASE_MS + 3_000;
    const to = BASE_MS + 330_000;
    const expected = inRange(from, to);
    const seen: Record<string, unknown>[] = [];
    let token = "";
    for (let pages = 0; pages < 100; pages++) {
      const { status, body } = await rest({
        start_time: iso(from),
        end_time: iso(to),
        page_size: 17,
        ...(token ? { page_token: token } : {}),
      });
      expect(status).toBe(200);
      expect(body.total_count).toBe(expected.length);
      seen.push(...(body.events as Record<string, unknown>[]));
      token = body.next_page_token as string;
      if (!token) break;
    }
    expect(seen).toEqual(expected as unknown as Record<string, unknown>[]);
  });

  test("an offset time is the same instant as its UTC form", async () => {
    const utc = await rest({ start_time: "2026-03-01T10:01:00Z", end_time: "2026-03-01T10:03:00Z" });
    const tokyo = await rest({ start_time: "2026-03-01T19:01:00+09:00", end_time: "2026-03-01T19:03:00+09:00" });
    expect(tokyo.body.total_count).toBe(utc.body.total_count as number);
    expect((utc.body.total_count as number) > 0).toBe(true);
  });

  test.each<[string, (r: TestRecord) => boolean, Record<string, string>]>([
    ["principal_id", (r) => r.principal_id === "svc-app", { principal_id: "svc-app" }],
    ["an empty principal_id", (r) => r.principal_id === "", { principal_id: "" }],
    ["action", (r) => r.action === ACTIONS[1], { action: ACTIONS[1] as string }],
    ["result", (r) => r.result === "PERMISSION_DENIED", { result: "PERMISSION_DENIED" }],
    ["resource prefix", (r) => r.resource.startsWith("index/"), { resource_prefix: "index/" }],
    [
      "principal and result",
      (r) => r.principal_id === "svc-security" && r.result === "OK",
      { principal_id: "svc-security", result: "OK" },
    ],
  ])("filter by %s: exact total and only matching events", async (_what, match, filters) => {
    const from = BASE_MS + 10_000;
    const to = BASE_MS + 250_000;
    const expected = inRange(from, to, match);
    const { body } = await rest({ start_time: iso(from), end_time: iso(to), page_size: 100, ...filters });
    expect(body.total_count).toBe(expected.length);
    expect((body.events as TestRecord[]).map((e) => e.id)).toEqual(expected.map((e) => e.id));
  });

  test.each([
    ["start_time", { start_time: "yesterday", end_time: "2026-03-02T00:00:00Z" }],
    ["end_time", { start_time: "2026-03-02T00:00:00Z", end_time: "2026-03-01T00:00:00Z" }],
    ["page_size", { start_time: "2026-03-01T00:00:00Z", end_time: "2026-03-02T00:00:00Z", page_size: 0 }],
    ["page_size", { start_time: "2026-03-01T00:00:00Z", end_time: "2026-03-02T00:00:00Z", page_size: 101 }],
    ["page_token", { start_time: "2026-03-01T00:00:00Z", end_time: "2026-03-02T00:00:00Z", page_token: "nope" }],
    ["body", "[1,2]"],
    ["body", "{not json"],
  ])("bad %s: 400 INVALID_ARGUMENT naming the field", async (field, body) => {
    const answer = await rest(body);
    expect(answer.status).toBe(400);
    const error = answer.body.error as { code: string; message: string };
    expect(error.code).toBe("AUDIT_API_INVALID_ARGUMENT");
    expect(error.message).toStartWith(`${field}:`);
  });

  test("a page token is refused for another query or altered; it works on another replica", async () => {
    const query = { start_time: iso(BASE_MS), end_time: iso(BASE_MS + 600_000), page_size: 10 };
    const first = await rest(query);
    const token = first.body.next_page_token as string;
    expect(token).not.toBe("");
    const other = await rest({ ...query, end_time: iso(BASE_MS + 500_000), page_token: token });
    expect(other.status).toBe(400);
    expect((other.body.error as { message: string }).message).toStartWith("page_token:");
    const altered = await rest({
      ...query,
      page_token: `${token.slice(0, 5)}${token[5] === "A" ? "B" : "A"}${token.slice(6)}`,
    });
    expect(altered.status).toBe(400);
    const here = await rest({ ...query, page_token: token });
    const there = await rest({ ...query, page_token: token }, { on: replica });
    expect(there.status).toBe(200);
    expect(there.body).toEqual(here.body);
    expect((here.body.events as TestRecord[])[0]?.id).toBe(mine[10]?.id as string);
  });

  test("tenant isolation: another tenant's records are never counted or listed; its x-tenant-id is refused", async () => {
    const range = { start_time: iso(BASE_MS - 60_000), end_time: iso(BASE_MS + 3_600_000), page_size: 100 };
    const { body } = await rest({ ...range, principal_id: "svc-app" });
    expect((body.events as TestRecord[]).every((e) => e.tenant_id === tenant)).toBe(true);
    const foreign = await rest(range, { tenantId: OTHER_TENANT });
    expect(foreign.status).toBe(403);
    expect((foreign.body.error as { code: string }).code).toBe("AUTH_TENANT_MISMATCH");
  });

  test("no token: 401; a token without audit:read: 403", async () => {
    const range = { start_time: iso(BASE_MS), end_time: iso(BASE_MS + 60_000) };
    expect((await rest(range, { auth: "" })).status).toBe(401);
    expect((await rest(range, { auth: await bearer("security") })).status).toBe(403);
    expect((await rest(range, { auth: await bearer("app", "audit:read") })).status).toBe(403);
  });

  test("a batch stored again (a retried write: second object version, plus one new event) changes no total", async () => {
    const from = BASE_MS + 3_600_000;
    const to = from + 120_000;
    const batch = [record(90_001, tenant, from + 1_000), record(90_002, tenant, from + 61_000)];
    expect(await storeBatch(sql, s3, names, sealBatch(names.topic, 5, 0n, batch))).toBe(2);
    const before = await rest({ start_time: iso(from), end_time: iso(to) });
    expect(before.body.total_count).toBe(2);
    const retried = [...batch, record(90_003, tenant, from + 62_000)];
    expect(await storeBatch(sql, s3, names, sealBatch(names.topic, 5, 0n, retried))).toBe(1);
    const after = await rest({ start_time: iso(from), end_time: iso(to) });
    expect(after.body.total_count).toBe(3);
    expect((after.body.events as TestRecord[]).map((e) => e.id)).toEqual(["ev-90001", "ev-90002", "ev-90003"]);
  });
});

describe("REST POST /v2/audit/events/export (application/x-ndjson)", () => {
  const exportRest = (body: unknown, auth = fullAuth) =>
    fetch(`http://127.0.0.1:${api.restPort}/v2/audit/events/export`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-tenant-id": tenant, authorization: auth },
      body: JSON.stringify(body),
    });

  test("streams every stored line of a range larger than the unary limit, in order", async () => {
    const from = BASE_MS - 60_000;
    const to = BASE_MS + 600_000;
    const response = await exportRest({ start_time: iso(from), end_time: iso(to), format: "EXPORT_FORMAT_JSON" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const expected = inRange(from, to);
    expect(expected.length).toBeGreaterThan(200);
    expect(await response.text()).toBe(expected.map((r) => `${JSON.stringify(r)}\n`).join(""));
  });

  test("needs audit:export; a bad field is a 400 before any byte streams", async () => {
    const range = { start_time: iso(BASE_MS), end_time: iso(BASE_MS + 60_000) };
    expect((await exportRest(range, readOnlyAuth)).status).toBe(403);
    const bad = await exportRest({ ...range, page_size: 5 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toStartWith("page_size:");
  });
});

describe("gRPC audit.v2.AuditService", () => {
  let client: AuditServiceClient;
  beforeAll(() => {
    client = new AuditServiceClient(`127.0.0.1:${api.grpcPort}`, credentials.createInsecure());
  });
  afterAll(() => client?.close());

  function metadata(auth = fullAuth, tenantId = tenant): Metadata {
    const m = new Metadata();
    m.set("x-tenant-id", tenantId);
    if (auth) m.set("authorization", auth);
    return m;
  }
  const list = (request: Partial<ListEventsRequest>, m = metadata()) =>
    new Promise<ListEventsResponse>((resolve, reject) =>
      client.listEvents({ header: { id: "t" }, startTime: "", endTime: "", pageToken: "", ...request }, m, (e, r) =>
        e ? reject(e) : resolve(r),
      ),
    );
  const exportEvents = (request: Partial<ExportEventsRequest>, m = metadata()) =>
    new Promise<ExportEventsResponse>((resolve, reject) =>
      client.exportEvents({ header: { id: "t" }, startTime: "", endTime: "", format: 1, ...request }, m, (e, r) =>
        e ? reject(e) : resolve(r),
      ),
    );
  const failure = (promise: Promise<unknown>) => rejectionOf(promise, Error) as Promise<ServiceError>;

  test("list_events: the REST answer's total and events, as AuditEvent messages", async () => {
    const from = BASE_MS + 20_000;
    const to = BASE_MS + 200_000;
    const answer = await list({ startTime: iso(from), endTime: iso(to), pageSize: 50, action: ACTIONS[0] });
    const expected = inRange(from, to, (r) => r.action === ACTIONS[0]);
    expect(answer.totalCount).toBe(expected.length);
    expect(answer.events.map((e) => e.id)).toEqual(expected.map((r) => r.id));
    const first = expected[0] as TestRecord;
    expect(answer.events[0]).toMatchObject({
      time: first.time,
      action: first.action,
      result: first.result,
      claimedTenantId: tenant,
      principalId: first.principal_id,
      tenantId: tenant,
      durationMs: first.duration_ms,
    });
  });

  test("list_events: an absent page_size is the default; an explicit 0 and a bad time are INVALID_ARGUMENT", async () => {
    const range = { startTime: iso(BASE_MS), endTime: iso(BASE_MS + 3_600_000) };
    expect((await list(range)).events).toHaveLength(100);
    const zero = await failure(list({ ...range, pageSize: 0 }));
    expect(zero.code).toBe(status.INVALID_ARGUMENT);
    expect(zero.details).toContain("page_size:");
    const bad = await failure(list({ ...range, endTime: "2026-13-01T00:00:00Z" }));
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
    expect(bad.details).toContain("end_time:");
  });

  test("export_events: JSONL of the stored lines, in order; with a filter", async () => {
    const from = BASE_MS;
    const to = BASE_MS + 200_000;
    const answer = await exportEvents({ startTime: iso(from), endTime: iso(to) });
    const lines = Buffer.from(answer.data).toString("utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toEqual(inRange(from, to).map((r) => JSON.stringify(r)));
    expect(answer.totalCount).toBe(lines.length);
    const denied = await exportEvents({ startTime: iso(from), endTime: iso(to), result: "PERMISSION_DENIED" });
    expect(denied.totalCount).toBe(inRange(from, to, (r) => r.result === "PERMISSION_DENIED").length);
  });

  test("export_events above the largest unary export: RESOURCE_EXHAUSTED naming the streaming form", async () => {
    const error = await failure(exportEvents({ startTime: iso(BASE_MS - 60_000), endTime: iso(BASE_MS + 3_600_000) }));
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error.details).toContain("AUDIT_API_EXPORT_TOO_LARGE");
    expect(error.details).toContain("export_events_stream");
  });

  test("export_events_stream: the whole range in chunks of whole lines, beyond the unary limit", async () => {
    const from = BASE_MS - 60_000;
    const to = BASE_MS + 600_000;
    const stream = client.exportEventsStream(
      { header: { id: "s" }, startTime: iso(from), endTime: iso(to), format: 1, principalId: "svc-app" },
      metadata(),
    );
    let text = "";
    let count = 0;
    for await (const chunk of stream as AsyncIterable<ExportEventsStreamResponse>) {
      const part = Buffer.from(chunk.data).toString("utf8");
      expect(part.endsWith("\n")).toBe(true);
      text += part;
      count += chunk.count;
    }
    const expected = inRange(from, to, (r) => r.principal_id === "svc-app");
    expect(count).toBe(expected.length);
    expect(text).toBe(expected.map((r) => `${JSON.stringify(r)}\n`).join(""));
  });

  test("export_events_stream: a bad field and a missing scope end the stream with their status", async () => {
    const statusOf = (request: Partial<ExportEventsStreamRequest>, m: Metadata) =>
      new Promise<ServiceError>((resolve, reject) => {
        const stream = client.exportEventsStream(
          { header: { id: "s" }, startTime: iso(BASE_MS), endTime: iso(BASE_MS + 60_000), format: 1, ...request },
          m,
        );
        stream.on("data", () => {});
        stream.on("error", resolve);
        stream.on("end", () => reject(new Error("the stream ended without an error")));
      });
    const bad = await statusOf({ endTime: "tomorrow" }, metadata());
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
    expect(bad.details).toContain("end_time:");
    expect((await statusOf({}, metadata(readOnlyAuth))).code).toBe(status.PERMISSION_DENIED);
  });

  test("export needs audit:export; another tenant's header is refused; no token is UNAUTHENTICATED", async () => {
    const range = { startTime: iso(BASE_MS), endTime: iso(BASE_MS + 60_000) };
    expect((await failure(exportEvents(range, metadata(readOnlyAuth)))).code).toBe(status.PERMISSION_DENIED);
    expect((await list(range, metadata(readOnlyAuth))).totalCount).toBe(inRange(BASE_MS, BASE_MS + 60_000).length);
    expect((await failure(list(range, metadata(fullAuth, OTHER_TENANT)))).code).toBe(status.PERMISSION_DENIED);
    expect((await failure(list(range, metadata("")))).code).toBe(status.UNAUTHENTICATED);
  });
});
