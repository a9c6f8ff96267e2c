/**
 * gRPC server reflection: the audit service found and called with no proto file, as grpcurl does it — the
 * reflection protocol (`grpc.reflection.v1`) by hand, and grpcurl itself (pinned in ops/tools/grpcurl, built into
 * the tool cache on first use like the stack's servers). Real Keycloak tokens, real stack.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { ensureTool, type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { pino } from "pino";
import descriptor from "protobufjs/ext/descriptor/index.js";
import { type AuditApi, parseAuditApiConfig, startAuditApi } from "../index.ts";
import { jsonName, mapEntryName } from "../src/protoc-descriptors.ts";
import { ReflectionClient, unary } from "./support/reflection-client.ts";
import {
  apiEnv,
  byTimeThenId,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const storage = testStorage("refl");
const { names, sql, s3 } = storage;
const T0 = Date.parse("2026-06-02T12:00:00Z");
const RANGE = { start_time: "2026-06-02T00:00:00+09:00", end_time: "2026-06-03T00:00:00Z" };

let realm: SeededRealm;
let api: AuditApi;
let tenant: string;
let bearer: string;
let mine: TestRecord[];
let reflection: ReflectionClient;

beforeAll(async () => {
  realm = await seedTestRealm("audit-refl");
  tenant = realm.seed.tenantId;
  await storage.create();
  mine = Array.from({ length: 25 }, (_, i) =>
    sampleRecord(`ev-${String(i).padStart(3, "0")}`, tenant, T0 + i * 700, {
      result: i % 5 === 0 ? "PERMISSION_DENIED" : "OK",
    }),
  );
  await storeBatch(
    sql,
    s3,
    names,
    sealBatch(names.topic, 0, 0n, [...mine, sampleRecord("zz-1", "other-tenant", T0 + 10)]),
  );
  mine.sort(byTimeThenId);
  api = await startAuditApi(parseAuditApiConfig(apiEnv(names.schema, { SVC_AUTH_ISSUER: realm.issuer })), {
    logger: pino({ level: "silent" }),
  });
  const { url, realm: name, clientId, userPassword } = realm.seed;
  const set = await issueToken(
    { url, realm: name, clientId },
    { user: "security", password: userPassword, scope: "audit:read audit:export" },
  );
  bearer = `Bearer ${set.access_token}`;
  reflection = new ReflectionClient(`127.0.0.1:${api.grpcPort}`);
}, 60_000);

afterAll(async () => {
  reflection?.close();
  await api?.stop();
  await storage.remove();
  await realm?.remove();
});

function metadata(auth: string | undefined = bearer): Metadata {
  const m = new Metadata();
  m.set("x-tenant-id", tenant);
  if (auth) m.set("authorization", auth);
  return m;
}

test("reflection lists the audit, health and reflection services", async () => {
  const services = await reflection.listServices();
  expect(services).toContain("audit.v2.AuditService");
  expect(services).toContain("grpc.health.v1.Health");
  expect(services).toContain("grpc.reflection.v1.ServerReflection");
});

test("reflected descriptors are as protoc writes them: map entry AttributesEntry, json_name lowerCamel", async () => {
  expect(mapEntryName("foo_bar")).toBe("FooBarEntry");
  expect(jsonName("claimed_tenant_id")).toBe("claimedTenantId");
  const files = await reflection.filesContaining("audit.v2.AuditEvent");
  const file = descriptor.FileDescriptorProto.decode(files[0] as Buffer) as unknown as {
    messageType: {
      name: string;
      field: { name: string; jsonName: string; typeName?: string }[];
      nestedType: { name: string }[];
    }[];
  };
  const event = file.messageType.find((m) => m.name === "AuditEvent");
  expect(event?.nestedType.map((n) => n.name)).toEqual(["AttributesEntry"]);
  expect(event?.field.find((f) => f.name === "attributes")?.typeName).toBe(".audit.v2.AuditEvent.AttributesEntry");
  expect(event?.field.find((f) => f.name === "claimed_tenant_id")?.jsonName).toBe("claimedTenantId");
});

test("list_events and export_events called through reflected descriptors only", async () => {
  const client = await reflection.serviceClient("audit.v2.AuditService");
  try {
    const page = await unary<{ total_count: number; events: { id: string; claimed_tenant_id: string }[] }>(
      client,
      "list_events",
      { header: { id: "r1" }, ...RANGE, page_size: 10 },
      metadata(),
    );
    expect(page.total_count).toBe(mine.length);
    expect(page.events.map((e) => e.id)).toEqual(mine.slice(0, 10).map((r) => r.id));
    expect(page.events[0]?.claimed_tenant_id).toBe(tenant);
    const exported = await unary<{ data: Buffer; total_count: number }>(
      client,
      "export_events",
      { header: { id: "r2" }, ...RANGE, format: "EXPORT_FORMAT_JSON", result: "PERMISSION_DENIED" },
      metadata(),
    );
    const denied = mine.filter((r) => r.result === "PERMISSION_DENIED");
    expect(exported.total_count).toBe(denied.length);
    expect(exported.data.toString("utf8")).toBe(denied.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const bad = (await unary(
      client,
      "list_events",
      { header: { id: "r3" }, ...RANGE, start_time: "now" },
      metadata(),
    ).catch((error: unknown) => error)) as ServiceError;
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
    expect(bad.details).toContain("start_time:");
    const anonymous = (await unary(client, "list_events", { header: { id: "r4" }, ...RANGE }, metadata("")).catch(
      (error: unknown) => error,
    )) as ServiceError;
    expect(anonymous.code).toBe(status.UNAUTHENTICATED);
  } finally {
    client.close();
  }
});

/** A child process run without blocking this one (the API under test answers from this event loop). */
async function run(command: string[]) {
  const proc = Bun.spawn(command, { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, exitCode };
}

test("grpcurl, with no proto file: list, then list_events exactly as the spec shows the call", async () => {
  const grpcurl = await ensureTool("grpcurl"); // pinned in ops/tools/grpcurl, built on first use
  const address = `127.0.0.1:${api.grpcPort}`;
  const listed = await run([grpcurl, "-plaintext", address, "list"]);
  expect(listed.exitCode).toBe(0);
  expect(listed.stdout).toContain("audit.v2.AuditService");
  const call = await run([
    grpcurl,
    "-plaintext",
    "-H",
    `x-tenant-id: ${tenant}`,
    "-H",
    `authorization: ${bearer}`,
    "-d",
    JSON.stringify({ header: { id: "g1" }, ...RANGE, page_size: 3 }),
    address,
    "audit.v2.AuditService/list_events",
  ]);
  expect(call.stderr).toBe("");
  expect(call.exitCode).toBe(0);
  // proto3 JSON: an int64 is a string, names are the json_name (lowerCamel) as from any protoc-built server.
  const answer = JSON.parse(call.stdout) as { totalCount: string; events: { id: string; claimedTenantId: string }[] };
  expect(answer.totalCount).toBe(String(mine.length));
  expect(answer.events[0]?.claimedTenantId).toBe(tenant);
  expect(answer.events.map((e) => e.id)).toEqual(mine.slice(0, 3).map((r) => r.id));
}, 300_000);
