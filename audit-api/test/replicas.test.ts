/**
 * Replicas and the auth-disabled mode (spec: test environments), on the real stack: two API replicas over one
 * index answer every query identically, a page token from one works on the other, a replica started afresh answers
 * at once; with authentication disabled the `authorization` header may be omitted on REST and gRPC and
 * `x-tenant-id` alone selects the tenant. The app serves its OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { credentials, Metadata } from "@grpc/grpc-js";
import { AuditServiceClient, type ListEventsResponse } from "@svc/proto";
import { pino } from "pino";
import { type AuditApi, parseAuditApiConfig, startAuditApi } from "../index.ts";
import {
  AUTH_DISABLED,
  apiEnv,
  byTimeThenId,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const storage = testStorage("repl");
const { names, sql, s3 } = storage;
const TENANT = "tenant-a";
const OTHER = "tenant-b";
const T0 = Date.parse("2026-07-07T07:00:30Z");
const RANGE = { start_time: "2026-07-07T07:00:00Z", end_time: "2026-07-07T08:00:00Z" };
const PRINCIPALS = ["svc-app", "svc-ops", "svc-security"];

const replicas: AuditApi[] = [];
let mine: TestRecord[];

async function startReplica(): Promise<AuditApi> {
  const config = parseAuditApiConfig(
    apiEnv(names.schema, {
      ...AUTH_DISABLED,
      SVC_AUDIT_API_MAX_PAGE_SIZE: "50",
      SVC_AUDIT_API_DEFAULT_PAGE_SIZE: "20",
    }),
  );
  const replica = await startAuditApi(config, { logger: pino({ level: "silent" }) });
  replicas.push(replica);
  return replica;
}

beforeAll(async () => {
  await storage.create();
  // Ties on time every third record (the id decides), across three partitions' objects.
  mine = Array.from({ length: 180 }, (_, i) =>
    sampleRecord(`ev-${String(i).padStart(4, "0")}`, TENANT, T0 + Math.floor(i / 3) * 37_000, {
      principal_id: PRINCIPALS[i % 3] as string,
      result: i % 7 === 0 ? "PERMISSION_DENIED" : "OK",
    }),
  );
  const theirs = Array.from({ length: 30 }, (_, i) => sampleRecord(`ot-${i}`, OTHER, T0 + i * 1_000));
  for (let p = 0; p < 3; p++) {
    const part = [...mine.filter((_, i) => i % 3 === p), ...theirs.filter((_, i) => i % 3 === p)];
    await storeBatch(sql, s3, names, sealBatch(names.topic, p, 0n, part));
  }
  mine.sort(byTimeThenId);
  await startReplica();
  await startReplica();
});

afterAll(async () => {
  for (const replica of replicas) await replica.stop();
  await storage.remove();
});

async function rest(on: AuditApi, body: unknown, tenantId = TENANT, path = "/v2/audit/events") {
  const response = await fetch(`http://127.0.0.1:${on.restPort}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-tenant-id": tenantId },
    body: JSON.stringify(body),
  });
  return response;
}

async function page(on: AuditApi, body: Record<string, unknown>) {
  const response = await rest(on, body);
  expect(response.status).toBe(200);
  return (await response.json()) as { total_count: number; events: TestRecord[]; next_page_token: string };
}

describe("two replicas over the same index", () => {
  test.each([
    ["no filter", {}],
    ["principal_id", { principal_id: "svc-ops" }],
    ["result", { result: "PERMISSION_DENIED" }],
    ["a partial-minute range", { start_time: "2026-07-07T07:03:17.5Z", end_time: "2026-07-07T07:41:02Z" }],
  ])("identical totals and pages (%s)", async (_what, extra) => {
    const query = { ...RANGE, page_size: 23, ...extra };
    const [a, b] = replicas as [AuditApi, AuditApi];
    let token = "";
    for (let i = 0; i < 50; i++) {
      const body = { ...query, ...(token ? { page_token: token } : {}) };
      const [fromA, fromB] = await Promise.all([page(a, body), page(b, body)]);
      expect(fromB).toEqual(fromA);
      token = fromA.next_page_token;
      if (!token) break;
    }
    expect(token).toBe("");
  });

  test("pages fetched alternately from each replica cover the range once, in order", async () => {
    const seen: string[] = [];
    let token = "";
    for (let i = 0; i < 50; i++) {
      const on = replicas[i % 2] as AuditApi;
      const answer = await page(on, { ...RANGE, page_size: 17, ...(token ? { page_token: token } : {}) });
      expect(answer.total_count).toBe(mine.length);
      seen.push(...answer.events.map((e) => e.id));
      token = answer.next_page_token;
      if (!token) break;
    }
    expect(seen).toEqual(mine.map((r) => r.id));
  });

  test("a replica started afresh answers at once, the same, and takes a token another issued", async () => {
    const first = await page(replicas[0] as AuditApi, { ...RANGE, page_size: 40 });
    const fresh = await startReplica();
    const again = await page(fresh, { ...RANGE, page_size: 40 });
    expect(again).toEqual(first);
    const next = await page(fresh, { ...RANGE, page_size: 40, page_token: first.next_page_token });
    expect(next.events.map((e) => e.id)).toEqual(mine.slice(40, 80).map((r) => r.id));
  });
});

describe("authentication disabled (test environments)", () => {
  test("REST list and export without an authorization header; x-tenant-id alone selects the tenant", async () => {
    const api = replicas[0] as AuditApi;
    const theirs = await rest(api, RANGE, OTHER);
    const other = (await theirs.json()) as { total_count: number; events: TestRecord[] };
    expect(other.total_count).toBe(30);
    expect(other.events.every((e) => e.tenant_id === OTHER)).toBe(true);
    const exported = await rest(api, { ...RANGE, principal_id: "svc-security" }, TENANT, "/v2/audit/events/export");
    expect(exported.status).toBe(200);
    const expected = mine.filter((r) => r.principal_id === "svc-security");
    expect(await exported.text()).toBe(expected.map((r) => `${JSON.stringify(r)}\n`).join(""));
  });

  test("gRPC list_events without authorization metadata", async () => {
    const client = new AuditServiceClient(
      `127.0.0.1:${(replicas[1] as AuditApi).grpcPort}`,
      credentials.createInsecure(),
    );
    try {
      const metadata = new Metadata();
      metadata.set("x-tenant-id", TENANT);
      const answer = await new Promise<ListEventsResponse>((resolve, reject) =>
        client.listEvents(
          { header: { id: "d" }, startTime: RANGE.start_time, endTime: RANGE.end_time, pageToken: "", pageSize: 5 },
          metadata,
          (error, response) => (error ? reject(error) : resolve(response)),
        ),
      );
      expect(answer.totalCount).toBe(mine.length);
      expect(answer.events.map((e) => e.id)).toEqual(mine.slice(0, 5).map((r) => r.id));
    } finally {
      client.close();
    }
  });
});

test("the OpenAPI document: both audit routes, the bearer scheme, the request fields", async () => {
  const api = replicas[0] as AuditApi;
  const response = await fetch(`http://127.0.0.1:${api.restPort}/openapi/json`);
  expect(response.status).toBe(200);
  const document = (await response.json()) as {
    openapi: string;
    paths: Record<
      string,
      Record<string, { requestBody: { content: Record<string, { schema: { properties: object } }> } }>
    >;
    components: { securitySchemes: Record<string, unknown> };
  };
  expect(document.openapi).toStartWith("3.");
  expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/v2/audit/events", "/v2/audit/events/export"]));
  const body = document.paths["/v2/audit/events"]?.post?.requestBody.content["application/json"]?.schema;
  expect(Object.keys(body?.properties ?? {})).toEqual(
    expect.arrayContaining(["start_time", "end_time", "page_size", "page_token", "principal_id", "resource_prefix"]),
  );
  expect(document.components.securitySchemes).toHaveProperty("bearerAuth");
  expect((await fetch(`http://127.0.0.1:${api.restPort}/openapi`)).status).toBe(200);
});
