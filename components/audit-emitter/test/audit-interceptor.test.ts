import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Metadata, status } from "@grpc/grpc-js";
import { type AuditRecord, validateRecord } from "@svc/audit-record";
import { type AuthCore, authorizeService, createAuthCore, parseAuthConfig } from "@svc/auth";
import { waitFor } from "@svc/common";
import { type SeededRealm, seedTestRealm, type TempDir, tempDir, thrownBy } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { type Logger, pino } from "pino";
import {
  AUDIT_UNAVAILABLE_STATUS,
  type AuditEmitter,
  AuditEmitterError,
  auditInterceptor,
  createAuditEmitter,
  type EmitterConfig,
  linkRefusedCaller,
  REDACTED,
  type ResourceOf,
  resourcesOf,
  withAuditIdentity,
} from "../index.ts";
import {
  callUnary,
  type EchoClient,
  type EchoRequest,
  type EchoService,
  echoDefinition,
  echoService,
  listen,
  readStream,
  Server,
} from "./support/echo-service.ts";
import { recordsIn } from "./support/records-in.ts";

const silent = pino({ level: "silent" });
let realm: SeededRealm;
let noRole: string;
let auth: AuthCore;
let dir: TempDir;
let token: string;

beforeAll(async () => {
  // The stack's Keycloak, a realm of this file's own: users `app` (role app) and `ops`, tenant `tenant-a`.
  realm = await seedTestRealm("interceptor", "tenant-a");
  const { url, realm: name, clientId, userPassword } = realm.seed;
  const accessToken = async (user: string) =>
    (await issueToken({ url, realm: name, clientId }, { user, password: userPassword })).access_token;
  auth = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: realm.issuer }), logger: silent });
  await auth.start();
  token = await accessToken("app");
  noRole = await accessToken("ops");
  dir = await tempDir("interceptor");
});

afterAll(async () => {
  await realm.remove();
  await dir.remove();
});

interface Harness {
  client: EchoClient;
  emitter: AuditEmitter;
  service: EchoService;
  path: string;
  records(): Promise<AuditRecord[]>;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of open.splice(0)) await stop();
});

interface HarnessOptions {
  /** Default: the echo service's resource functions. */
  resources?: Record<string, ResourceOf>;
  exclude?: (path: string) => boolean;
  /** `false` adds the service without `withAuditIdentity`. */
  link?: boolean;
  /** `false` wraps the service without `linkRefusedCaller` as auth's `onRefused` hook. */
  linkRefused?: boolean;
  logger?: Logger;
}

const echoResources = {
  unary: (request: unknown) => `echo/${(request as EchoRequest).name}`,
  server_stream: (request: unknown) => `stream/${(request as EchoRequest).name}`,
};

/** A real grpc-js server on port 0: the audit interceptor outside, `@svc/auth` around the echo handlers. */
async function harness(config: Partial<EmitterConfig> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const path = config.file ?? join(dir.path, `${crypto.randomUUID()}.jsonl`);
  const emitter = createAuditEmitter(
    {
      source: "endpoint",
      sink: "file",
      file: path,
      failMode: "open",
      maxBufferedBytes: 16 * 1024 * 1024,
      fsync: false,
      ...config,
    },
    { logger: silent },
  );
  const server = new Server({
    interceptors: [
      auditInterceptor(emitter, {
        resources: resourcesOf(echoDefinition, options.resources ?? echoResources),
        logger: options.logger ?? silent,
        exclude: options.exclude,
      }),
    ],
  });
  const service = echoService();
  const operations = {
    unary: "endpoint.grpc",
    server_stream: "endpoint.grpc",
    client_stream: "endpoint.grpc",
    bidi: "endpoint.grpc",
  } as const;
  const authorized = authorizeService(
    auth,
    echoDefinition,
    service.implementation,
    operations,
    options.linkRefused === false ? {} : { onRefused: linkRefusedCaller },
  );
  server.addService(
    echoDefinition,
    options.link === false ? authorized : withAuditIdentity(echoDefinition, authorized),
  );
  const { client } = await listen(server);
  open.push(async () => {
    client.close();
    server.forceShutdown();
    await emitter.close();
  });
  return {
    client,
    emitter,
    service,
    path,
    records: async () => {
      await emitter.flush();
      return recordsIn(path);
    },
  };
}

/** Request metadata; `bearer: null` sends no authorization header. */
function metadata(tenant = "tenant-a", bearer: string | null = token): Metadata {
  const md = new Metadata();
  if (bearer !== null) md.set("authorization", `Bearer ${bearer}`);
  md.set("x-tenant-id", tenant);
  return md;
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("a unary call: one record with every spec field, valid for @svc/audit-record", async () => {
  const h = await harness();
  const before = Date.now();
  const answer = await callUnary(h.client, { name: "alpha" }, metadata());
  expect(answer.code).toBe(status.OK);
  const [record, ...more] = await h.records();
  expect(more).toHaveLength(0);
  if (!record) throw new Error("no record");
  expect(validateRecord(record)).toEqual(record);
  expect(record.id).toMatch(UUID_V7);
  expect(Date.parse(record.time)).toBeGreaterThanOrEqual(before - 5);
  expect(Date.parse(record.time)).toBeLessThanOrEqual(Date.now());
  expect(record).toMatchObject({
    source: "endpoint",
    action: "/test.Echo/unary",
    resource: "echo/alpha",
    result: "ok",
    claimed_tenant_id: "tenant-a",
    principal_id: "svc-app",
    tenant_id: "tenant-a",
  });
  expect(record.duration_ms).toBeGreaterThanOrEqual(0);
  expect(record.duration_ms).toBeLessThan(Date.now() - before + 1);
  expect(record.attributes).toBeUndefined();
});

test("ids are unique and sort in call order", async () => {
  const h = await harness();
  for (let i = 0; i < 5; i++) expect((await callUnary(h.client, { name: `n${i}` }, metadata())).code).toBe(0);
  const records = await h.records();
  const ids = records.map((record) => record.id);
  expect(new Set(ids).size).toBe(5);
  expect([...ids].sort()).toEqual(ids);
  expect(records.map((record) => record.resource)).toEqual(["echo/n0", "echo/n1", "echo/n2", "echo/n3", "echo/n4"]);
});

test("error results: the handler's status name, INTERNAL for a throwing handler", async () => {
  const h = await harness();
  expect((await callUnary(h.client, { name: "x", fail: status.NOT_FOUND }, metadata())).code).toBe(status.NOT_FOUND);
  expect((await callUnary(h.client, { name: "y", throws: true }, metadata())).code).toBe(status.INTERNAL);
  const records = await h.records();
  expect(records.map((record) => [record.resource, record.result, record.principal_id])).toEqual([
    ["echo/x", "NOT_FOUND", "svc-app"],
    ["echo/y", "INTERNAL", "svc-app"],
  ]);
});

test("calls refused by auth are recorded with the claimed tenant; a caller the policy refused is named", async () => {
  const h = await harness();
  expect((await callUnary(h.client, { name: "a" }, metadata("tenant-a", null))).code).toBe(status.UNAUTHENTICATED);
  expect((await callUnary(h.client, { name: "b" }, metadata("tenant-a", noRole))).code).toBe(status.PERMISSION_DENIED);
  expect((await callUnary(h.client, { name: "c" }, metadata("tenant-b"))).code).toBe(status.PERMISSION_DENIED);
  const stream = await readStream(h.client.server_stream({ name: "d", count: 1 }, metadata("tenant-a", noRole)));
  expect(stream.code).toBe(status.PERMISSION_DENIED);
  expect(h.service.handled).toBe(0);
  const records = await h.records();
  expect(records.map((r) => [r.resource, r.result, r.claimed_tenant_id, r.principal_id, r.tenant_id])).toEqual([
    // no valid token: nobody was verified
    ["echo/a", "UNAUTHENTICATED", "tenant-a", "", ""],
    // a verified caller without the role: who tried, and the tenant of their token
    ["echo/b", "PERMISSION_DENIED", "tenant-a", "svc-ops", "tenant-a"],
    // x-tenant-id not the token's tenant: refused before the policy, the verified caller named all the same
    ["echo/c", "PERMISSION_DENIED", "tenant-b", "svc-app", "tenant-a"],
    ["stream/d", "PERMISSION_DENIED", "tenant-a", "svc-ops", "tenant-a"],
  ]);
});

test("without linkRefusedCaller as auth's onRefused hook a refused caller is not named", async () => {
  const h = await harness({}, { linkRefused: false });
  expect((await callUnary(h.client, { name: "b" }, metadata("tenant-a", noRole))).code).toBe(status.PERMISSION_DENIED);
  expect((await h.records()).map((r) => [r.result, r.principal_id, r.tenant_id])).toEqual([
    ["PERMISSION_DENIED", "", ""],
  ]);
});

test("streaming calls: server stream (ok and failing mid-way), client stream and bidi, one record each", async () => {
  const h = await harness();
  const ok = await readStream(h.client.server_stream({ name: "s1", count: 3 }, metadata()));
  expect(ok).toEqual({ code: 0, messages: [0, 1, 2].map((i) => ({ echo: "s1", i })) });
  const failed = await readStream(h.client.server_stream({ name: "s2", count: 2, fail: status.ABORTED }, metadata()));
  expect(failed.code).toBe(status.ABORTED);
  const sum = await new Promise<number>((resolve) => {
    const call = h.client.client_stream(metadata(), (error) => resolve(error ? error.code : 0));
    call.write({ name: "c1" });
    call.write({ name: "c2" });
    call.end();
  });
  expect(sum).toBe(0);
  const bidi = h.client.bidi(metadata());
  const echoed = readStream(bidi);
  bidi.write({ name: "b1" });
  bidi.end();
  expect((await echoed).messages).toEqual([{ echo: "b1" }]);
  const records = await h.records();
  expect(records.map((r) => [r.action, r.resource, r.result, r.principal_id])).toEqual([
    ["/test.Echo/server_stream", "stream/s1", "ok", "svc-app"],
    ["/test.Echo/server_stream", "stream/s2", "ABORTED", "svc-app"],
    ["/test.Echo/client_stream", "", "ok", "svc-app"],
    ["/test.Echo/bidi", "", "ok", "svc-app"],
  ]);
});

test("a call the client cancels and one past its deadline are recorded as CANCELLED / DEADLINE_EXCEEDED", async () => {
  const h = await harness();
  const stream = h.client.server_stream({ name: "gone", count: 1, hang: true }, metadata());
  await new Promise<void>((resolve) => stream.once("data", () => resolve()));
  stream.on("error", () => undefined);
  stream.cancel();
  const late = await callUnary(h.client, { name: "slow", hang: true }, metadata(), {
    deadline: Date.now() + 200,
  });
  expect(late.code).toBe(status.DEADLINE_EXCEEDED);
  await waitFor("two records", async () => ((await h.records()).length === 2 ? true : undefined), {
    timeoutMs: 5_000,
  });
  const results = (await h.records()).map((r) => [r.resource, r.result]);
  expect(results).toContainEqual(["stream/gone", "CANCELLED"]);
  expect(results).toContainEqual(["echo/slow", "DEADLINE_EXCEEDED"]);
});

test("fail-open (default): with an unwritable file the call succeeds and the loss is counted", async () => {
  const h = await harness({ file: "/dev/full" });
  expect((await callUnary(h.client, { name: "x" }, metadata())).code).toBe(status.OK);
  await h.emitter.flush();
  expect(h.emitter.stats()).toMatchObject({ recordsWritten: 0, recordsFailed: 1 });
  expect(h.emitter.healthy).toBe(false);
});

test("fail-closed: a call whose record cannot be written is refused with UNAVAILABLE; then refused before its handler", async () => {
  const h = await harness({ file: "/dev/full", failMode: "closed" });
  const first = await callUnary(h.client, { name: "x" }, metadata());
  expect(first).toMatchObject({ code: status.UNAVAILABLE, details: AUDIT_UNAVAILABLE_STATUS.details });
  expect(h.service.handled).toBe(1);
  const stream = await readStream(h.client.server_stream({ name: "s", count: 0 }, metadata()));
  expect(stream.code).toBe(status.UNAVAILABLE);
  expect((await callUnary(h.client, { name: "y" }, metadata())).code).toBe(status.UNAVAILABLE);
  expect(h.service.handled).toBe(1); // the sink is failing: later calls never reached a handler
  expect(h.emitter.stats().recordsFailed).toBe(3);
});

test("fail-closed, streaming: messages already sent stay sent, the final status becomes UNAVAILABLE", async () => {
  const h = await harness({ file: "/dev/full", failMode: "closed" });
  const stream = await readStream(h.client.server_stream({ name: "s", count: 2 }, metadata()));
  expect(stream).toEqual({ code: status.UNAVAILABLE, messages: [0, 1].map((i) => ({ echo: "s", i })) });
  expect(h.service.handled).toBe(1);
  expect(h.emitter.stats().recordsFailed).toBe(1);
});

test("fail-closed with a working file: calls proceed and every record is written before the answer", async () => {
  const h = await harness({ failMode: "closed" });
  expect((await callUnary(h.client, { name: "x" }, metadata())).code).toBe(status.OK);
  // no flush: the status was held until the record was written
  expect((await recordsIn(h.path)).map((r) => r.resource)).toEqual(["echo/x"]);
});

test("redaction: a handler cannot get a token, password or key material into a record", async () => {
  const h = await harness();
  const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----";
  const rawKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  const annotation = {
    resource: `keys/${token}`,
    attributes: { key_id: "k-1", password: "hunter2", api_token: token, privateKey: pem, note: pem, material: rawKey },
  };
  expect((await callUnary(h.client, { name: "r", annotation }, metadata())).code).toBe(0);
  // a token sent as the tenant header (refused by auth, still recorded) is masked too
  expect((await callUnary(h.client, { name: "t" }, metadata(token))).code).toBe(status.PERMISSION_DENIED);
  // fail-open writes after the answer: the file holds both records once the emitter is flushed
  await h.emitter.flush();
  const text = await Bun.file(h.path).text();
  for (const secret of [token, "hunter2", "BEGIN PRIVATE KEY", rawKey, token.split(".")[1] ?? "?"]) {
    expect(text).not.toContain(secret);
  }
  const [annotated, refused] = await h.records();
  expect(annotated?.resource).toBe(REDACTED);
  expect(annotated?.attributes).toEqual({ key_id: "k-1", note: REDACTED, material: REDACTED });
  expect(refused?.claimed_tenant_id).toBe(REDACTED);
  expect(h.emitter.stats()).toMatchObject({ attributesDropped: 3, valuesRedacted: 4 });
});

test("500 concurrent calls give 500 well-formed JSONL lines with distinct ids", async () => {
  const h = await harness();
  const answers = await Promise.all(
    Array.from({ length: 500 }, (_, i) => callUnary(h.client, { name: `c${i}` }, metadata())),
  );
  expect(answers.every((answer) => answer.code === 0)).toBe(true);
  await h.emitter.flush();
  const text = await Bun.file(h.path).text();
  expect(text.endsWith("\n")).toBe(true);
  const records = await recordsIn(h.path); // parses and validates every line
  expect(records).toHaveLength(500);
  expect(new Set(records.map((r) => r.id)).size).toBe(500);
  expect(new Set(records.map((r) => r.resource))).toEqual(new Set(answers.map((_, i) => `echo/c${i}`)));
});

test("resourcesOf refuses a name that is not a method of the service (AUDIT_EMITTER_WIRING_INVALID)", () => {
  const error = thrownBy(() => resourcesOf(echoDefinition, { unray: () => "x" }), AuditEmitterError);
  expect(error.code).toBe("AUDIT_EMITTER_WIRING_INVALID");
  expect(error.subject).toBe("unray");
});

/** A pino logger whose JSON lines are kept for the test to read. */
function capture(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

test("a throwing resource function records an empty resource and is logged; the call is not affected", async () => {
  const { logger, lines } = capture();
  const resources = {
    unary: () => {
      throw new Error("no name");
    },
  };
  const h = await harness({}, { resources, logger });
  expect((await callUnary(h.client, { name: "x" }, metadata())).code).toBe(0);
  const [record] = await h.records();
  expect(record?.resource).toBe("");
  expect(lines).toContainEqual(expect.objectContaining({ action: "/test.Echo/unary", reason: "Error: no name" }));
});

test("without withAuditIdentity the identities are empty and one warning says why", async () => {
  const { logger, lines } = capture();
  const h = await harness({}, { link: false, logger });
  for (const name of ["a", "b"]) expect((await callUnary(h.client, { name }, metadata())).code).toBe(0);
  const records = await h.records();
  expect(records.map((r) => [r.principal_id, r.tenant_id, r.claimed_tenant_id])).toEqual([
    ["", "", "tenant-a"],
    ["", "", "tenant-a"],
  ]);
  expect(lines.filter((line) => String(line.msg).includes("withAuditIdentity"))).toHaveLength(1);
});

test("an excluded method path is not recorded; the others still are", async () => {
  const h = await harness({}, { exclude: (path) => path === "/test.Echo/unary" });
  expect((await callUnary(h.client, { name: "skipped" }, metadata())).code).toBe(0);
  expect((await readStream(h.client.server_stream({ name: "kept", count: 1 }, metadata()))).code).toBe(0);
  expect((await h.records()).map((r) => r.resource)).toEqual(["stream/kept"]);
});

test("a resource function that returns no string records an empty resource instead of losing the record", async () => {
  const h = await harness(
    {},
    { resources: { unary: (request) => (request as { missing?: string }).missing as string } },
  );
  expect((await callUnary(h.client, { name: "x" }, metadata())).code).toBe(0);
  expect((await h.records()).map((r) => [r.resource, r.result])).toEqual([["", "ok"]]);
  expect(h.emitter.stats().recordsInvalid).toBe(0);
});
