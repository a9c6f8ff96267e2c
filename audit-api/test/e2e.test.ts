/**
 * End to end (issue 8): a call on a gRPC server with the audit interceptor → the emitter's JSONL file → the agent →
 * Kafka → the writer (objects + index) → the audit API, found through gRPC `list_events` (total_count > 0) and in
 * `export_events` with `action`, `result`, `claimed_tenant_id` — first from the freshness tail, then from the
 * index once the writer flushed, counted once throughout. Real stack, real Keycloak tokens, all parts in process.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import {
  credentials,
  Metadata,
  makeGenericClientConstructor,
  Server,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { Admin } from "@platformatic/kafka";
import { type Agent, parseAgentConfig, startAgent } from "@svc/agent";
import {
  type AuditEmitter,
  auditInterceptor,
  createAuditEmitter,
  resourcesOf,
  withAuditIdentity,
} from "@svc/audit-emitter";
import { type AuthCore, authorizeService, createAuthCore, parseAuthConfig } from "@svc/auth";
import { bindGrpcServer, waitFor } from "@svc/common";
import {
  AuditServiceClient,
  type ExportEventsResponse,
  type ListEventsRequest,
  type ListEventsResponse,
} from "@svc/proto";
import { ensureIndexSchema, parseQueueConsumerConfig, type QueueConsumer, startConsumer } from "@svc/queue-consumer";
import { randomName, type SeededRealm, seedTestRealm, stackEnv, type TempDir, tempDir } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { SQL } from "bun";
import { pino } from "pino";
import { type AuditApi, parseAuditApiConfig, startAuditApi } from "../index.ts";
import { storageNames } from "./support/stored-data.ts";

const silent = pino({ level: "silent" });
const names = storageNames("e2e");
const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};
const probe: ServiceDefinition = {
  touch: {
    path: "/e2e.Probe/Touch",
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};

let realm: SeededRealm;
let auth: AuthCore;
let dir: TempDir;
let emitter: AuditEmitter;
let server: Server;
let probeClient: InstanceType<ReturnType<typeof makeGenericClientConstructor>>;
let agent: Agent;
let writer: QueueConsumer | undefined;
let api: AuditApi;
let audit: AuditServiceClient;
let sql: SQL;

const brokers = () => stackEnv().kafkaBrokers.join(",");

/** The writer's and the API's shared settings (same names: one deployment's environment). */
function sharedEnv(): Record<string, string> {
  const stack = stackEnv();
  return {
    SVC_AUDIT_KAFKA_BROKERS: brokers(),
    SVC_AUDIT_TOPIC: names.topic,
    SVC_AUDIT_PG_URL: stack.postgresUrl,
    SVC_AUDIT_INDEX_SCHEMA: names.schema,
    SVC_AUDIT_S3_ENDPOINT: stack.s3.endpoint,
    SVC_AUDIT_S3_REGION: stack.s3.region,
    SVC_AUDIT_S3_ACCESS_KEY: stack.s3.accessKeyId,
    SVC_AUDIT_S3_SECRET_KEY: stack.s3.secretAccessKey,
    SVC_AUDIT_LOG_LEVEL: "silent",
  };
}

beforeAll(async () => {
  dir = await tempDir("audit-api-e2e");
  realm = await seedTestRealm("api-e2e");
  auth = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: realm.issuer }), logger: silent });
  await auth.start();
  const logFile = join(dir.path, "audit.jsonl");
  emitter = createAuditEmitter(
    { source: "endpoint", sink: "file", file: logFile, failMode: "open", maxBufferedBytes: 1 << 20, fsync: false },
    { logger: silent },
  );
  server = new Server({
    interceptors: [
      auditInterceptor(emitter, {
        resources: resourcesOf(probe, { touch: (request) => `probes/${(request as { name: string }).name}` }),
        logger: silent,
      }),
    ],
  });
  const implementation = {
    touch(call: ServerUnaryCall<{ name: string }, unknown>, callback: sendUnaryData<unknown>) {
      callback(null, { touched: call.request.name });
    },
  };
  server.addService(
    probe,
    withAuditIdentity(probe, authorizeService(auth, probe, implementation, { touch: "endpoint.grpc" })),
  );
  const port = await bindGrpcServer(server, "127.0.0.1:0");
  probeClient = new (makeGenericClientConstructor(probe, "Probe"))(`127.0.0.1:${port}`, credentials.createInsecure());
  const admin = new Admin({ clientId: "api-e2e-admin", bootstrapBrokers: stackEnv().kafkaBrokers });
  try {
    await admin.createTopics({ topics: [names.topic], partitions: 3, replicas: 1 });
  } finally {
    await admin.close();
  }
  agent = await startAgent(
    parseAgentConfig({
      SVC_AGENT_SOURCE: logFile,
      SVC_AGENT_KAFKA_BROKERS: brokers(),
      SVC_AGENT_TOPIC: names.topic,
      SVC_AGENT_DLQ_TOPIC: `${names.topic}.dlq`,
      SVC_AGENT_CHECKPOINT_FILE: join(dir.path, "agent.checkpoint"),
      SVC_AGENT_LINGER_MS: "5",
      SVC_AGENT_POLL_MS: "20",
      SVC_AGENT_LOG_LEVEL: "warn",
    }),
    { logger: silent },
  );
  sql = new SQL({ url: stackEnv().postgresUrl, max: 2 });
  // The index schema as the writer creates it; the API starts on it, its tail from the (empty) marks. The writer
  // itself starts in the test, once the tail has answered: until then nothing can be indexed.
  await ensureIndexSchema(sql, names.schema);
  api = await startAuditApi(
    parseAuditApiConfig({
      ...sharedEnv(),
      SVC_AUDIT_HOST_PORT: "0",
      SVC_AUDIT_GRPC_HOST: "127.0.0.1",
      SVC_AUDIT_REST_PORT: "0",
      SVC_AUDIT_REST_HOST: "127.0.0.1",
      SVC_AUDIT_API_PAGE_TOKEN_KEY: "e2e-page-token-key-0123456789abcdef",
      SVC_AUDIT_API_TAIL_REFRESH_MS: "100",
      SVC_AUTH_ISSUER: realm.issuer,
    }),
    { logger: silent },
  );
  audit = new AuditServiceClient(`127.0.0.1:${api.grpcPort}`, credentials.createInsecure());
}, 120_000);

afterAll(async () => {
  audit?.close();
  probeClient?.close();
  server?.forceShutdown();
  await api?.stop();
  await writer?.stop().catch(() => {});
  await agent?.stop().catch(() => {});
  await emitter?.close().catch(() => {});
  await sql?.unsafe(`DROP SCHEMA IF EXISTS "${names.schema}" CASCADE`).catch(() => {});
  await sql?.close();
  const admin = new Admin({ clientId: "api-e2e-admin", bootstrapBrokers: stackEnv().kafkaBrokers });
  await admin.deleteTopics({ topics: [names.topic, `${names.topic}.dlq`] }).catch(() => {});
  await admin.close();
  await realm?.remove();
  await dir?.remove();
}, 120_000);

function startWriter(): Promise<QueueConsumer> {
  return startConsumer(
    parseQueueConsumerConfig({
      ...sharedEnv(),
      SVC_AUDIT_GROUP_ID: randomName("svc-test-api-e2e"),
      SVC_AUDIT_BUCKET: "svc-audit",
      SVC_AUDIT_KEY_PREFIX: names.keyPrefix,
      SVC_AUDIT_RETENTION_DAYS: "1",
      SVC_AUDIT_BATCH_MAX_AGE_MS: "3000",
      SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: "6000",
    }),
    { logger: silent },
  );
}

async function bearer(user: string, scope?: string): Promise<string> {
  const { url, realm: name, clientId, userPassword } = realm.seed;
  return `Bearer ${(await issueToken({ url, realm: name, clientId }, { user, password: userPassword, scope })).access_token}`;
}

function metadata(authorization: string, tenantId = realm.seed.tenantId): Metadata {
  const m = new Metadata();
  m.set("authorization", authorization);
  m.set("x-tenant-id", tenantId);
  return m;
}

function touch(name: string, m: Metadata): Promise<number> {
  return new Promise((resolve) => {
    probeClient.makeUnaryRequest(
      probe.touch?.path ?? "",
      json.serialize,
      json.deserialize,
      { name },
      m,
      (e: ServiceError | null) => resolve(e ? e.code : status.OK),
    );
  });
}

test("a call through the audit interceptor is found by list_events and export_events, from the tail and then the index, once", async () => {
  const tenant = realm.seed.tenantId;
  const from = new Date(Date.now() - 60_000).toISOString();
  expect(await touch("allowed", metadata(await bearer("app")))).toBe(status.OK);
  expect(await touch("refused", metadata(await bearer("app"), "tenant-of-someone-else"))).toBe(
    status.PERMISSION_DENIED,
  );
  const to = new Date(Date.now() + 60_000).toISOString();
  const reader = metadata(await bearer("security", "audit:read audit:export"));
  const range = { header: { id: "e2e" }, startTime: from, endTime: to, resourcePrefix: "probes/" };
  const list = (request: Partial<ListEventsRequest> = {}) =>
    new Promise<ListEventsResponse>((resolve, reject) =>
      audit.listEvents({ ...range, pageToken: "", pageSize: 10, ...request }, reader, (e, r) =>
        e ? reject(e) : resolve(r),
      ),
    );
  const first = await waitFor(
    "the call in list_events",
    async () => {
      const answer = await list();
      return answer.totalCount > 0 ? answer : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 25 },
  );
  // Found while no writer runs: the freshness tail answered it (a writer's batch window may close at any moment, so
  // the writer starts only below).
  const indexedNow = (await sql.unsafe(
    `SELECT count(*)::int AS n FROM "${names.schema}".events WHERE resource = 'probes/allowed'`,
  )) as { n: number }[];
  expect(indexedNow[0]?.n).toBe(0);
  // The caller's tenant sees its own call only (the refused one claimed another tenant).
  expect(first.totalCount).toBe(1);
  expect(first.events[0]).toMatchObject({ resource: "probes/allowed", action: "/e2e.Probe/Touch", tenantId: tenant });

  const exported = await new Promise<ExportEventsResponse>((resolve, reject) =>
    audit.exportEvents({ ...range, format: 1 }, reader, (e, r) => (e ? reject(e) : resolve(r))),
  );
  const records = Buffer.from(exported.data)
    .toString("utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ action: "/e2e.Probe/Touch", result: "ok", claimed_tenant_id: tenant });

  // Once the writer flushed its batch (objects + index, mark raised), the answer is the same: counted once.
  writer = await startWriter();
  await waitFor(
    "the writer to index the call",
    async () => {
      const rows = (await sql.unsafe(
        `SELECT count(*)::int AS n FROM "${names.schema}".events WHERE resource = 'probes/allowed'`,
      )) as { n: number }[];
      return rows[0]?.n === 1 ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  const after = await list();
  expect(after.totalCount).toBe(1);
  expect(after.events).toEqual(first.events);
}, 90_000);
