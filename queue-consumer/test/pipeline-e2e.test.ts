/**
 * The whole pipeline with real parts (issue 7, first test): a gRPC server with the audit interceptor and
 * `@svc/auth` verifying tokens of the stack's Keycloak → the emitter's JSONL file → the agent → Kafka → the consumer →
 * an Object-Locked JSONL object in MinIO and its index rows in PostgreSQL. The object's retention is COMPLIANCE until
 * now + SVC_AUDIT_RETENTION_DAYS, and deleting that object version is refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
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
import { type Agent, parseAgentConfig, startAgent } from "@svc/agent";
import {
  type AuditEmitter,
  auditInterceptor,
  createAuditEmitter,
  resourcesOf,
  withAuditIdentity,
} from "@svc/audit-emitter";
import { type AuditRecord, parseRecordLine } from "@svc/audit-record";
import { type AuthCore, authorizeService, createAuthCore, parseAuthConfig } from "@svc/auth";
import { bindGrpcServer, waitFor } from "@svc/common";
import { type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { SQL } from "bun";
import { pino } from "pino";
import { type QueueConsumer, startConsumer } from "../index.ts";
import {
  type Addresses,
  consumerConfig,
  createTopic,
  deleteTopic,
  stackAddresses,
  type TestNames,
  testNames,
} from "./helpers.ts";

const silent = pino({ level: "silent" });
const RETENTION_DAYS = 1;
const DAY_MS = 86_400_000;

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};

/** A one-method JSON service standing in for a business API of `endpoint`. */
const probeDefinition: ServiceDefinition = {
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

interface TouchRequest {
  name: string;
  /** A value a careless handler might try to put into the record. */
  password?: string;
}

let addresses: Addresses;
let names: TestNames;
let realm: SeededRealm;
let auth: AuthCore;
let dir: string;
let emitter: AuditEmitter;
let server: Server;
let agent: Agent;
let consumer: QueueConsumer;
let sql: SQL;
let s3: S3Client;
let client: InstanceType<ReturnType<typeof makeGenericClientConstructor>>;

beforeAll(async () => {
  addresses = stackAddresses();
  names = testNames("e2e");
  dir = mkdtempSync(join(tmpdir(), "pipeline-e2e-"));
  realm = await seedTestRealm("e2e");
  auth = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: realm.issuer }), logger: silent });
  await auth.start();

  const logFile = join(dir, "audit.jsonl");
  emitter = createAuditEmitter(
    { source: "endpoint", sink: "file", file: logFile, failMode: "open", maxBufferedBytes: 1 << 20, fsync: false },
    { logger: silent },
  );
  server = new Server({
    interceptors: [
      auditInterceptor(emitter, {
        resources: resourcesOf(probeDefinition, { touch: (request) => `probes/${(request as TouchRequest).name}` }),
        logger: silent,
      }),
    ],
  });
  const implementation = {
    touch(call: ServerUnaryCall<TouchRequest, unknown>, callback: sendUnaryData<unknown>) {
      callback(null, { touched: call.request.name });
    },
  };
  server.addService(
    probeDefinition,
    withAuditIdentity(
      probeDefinition,
      authorizeService(auth, probeDefinition, implementation, { touch: "endpoint.grpc" }),
    ),
  );
  const port = await bindGrpcServer(server, "127.0.0.1:0");
  const Client = makeGenericClientConstructor(probeDefinition, "Probe");
  client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());

  await createTopic(addresses.brokers, names.topic);
  agent = await startAgent(
    parseAgentConfig({
      SVC_AGENT_SOURCE: logFile,
      SVC_AGENT_KAFKA_BROKERS: addresses.brokers,
      SVC_AGENT_TOPIC: names.topic,
      SVC_AGENT_DLQ_TOPIC: `${names.topic}.dlq`,
      SVC_AGENT_CHECKPOINT_FILE: join(dir, "agent.checkpoint"),
      SVC_AGENT_LINGER_MS: "5",
      SVC_AGENT_POLL_MS: "20",
      SVC_AGENT_LOG_LEVEL: "warn",
    }),
    { logger: silent },
  );
  consumer = await startConsumer(
    consumerConfig(addresses, names, { SVC_AUDIT_RETENTION_DAYS: String(RETENTION_DAYS) }),
    { logger: silent },
  );
  sql = new SQL(addresses.pgUrl);
  s3 = new S3Client({
    endpoint: addresses.s3Endpoint,
    region: addresses.s3Region,
    forcePathStyle: true,
    credentials: { accessKeyId: addresses.s3AccessKey, secretAccessKey: addresses.s3SecretKey },
  });
}, 120_000);

afterAll(async () => {
  client?.close();
  server?.forceShutdown();
  await consumer?.stop().catch(() => {});
  await agent?.stop().catch(() => {});
  await emitter?.close().catch(() => {});
  await sql?.unsafe(`DROP SCHEMA IF EXISTS "${names.schema}" CASCADE`).catch(() => {});
  await sql?.close();
  await deleteTopic(addresses.brokers, names.topic);
  await deleteTopic(addresses.brokers, `${names.topic}.dlq`);
  await realm?.remove();
  s3?.destroy();
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

async function bearer(user: string): Promise<string> {
  const { url, realm: name, clientId, userPassword } = realm.seed;
  const set = await issueToken({ url, realm: name, clientId }, { user, password: userPassword });
  return `Bearer ${set.access_token}`;
}

function touch(request: TouchRequest, metadata: Metadata): Promise<{ code: number }> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      probeDefinition.touch?.path ?? "",
      json.serialize,
      json.deserialize,
      request,
      metadata,
      (error: ServiceError | null) => resolve({ code: error ? error.code : status.OK }),
    );
  });
}

interface Stored {
  record: AuditRecord;
  bucket: string;
  key: string;
  versionId: string;
}

/** The stored copy of the record of the call to `resource`, found through the index and read from its object. */
async function storedRecordOf(resource: string): Promise<Stored | undefined> {
  const rows = await sql.unsafe(
    `SELECT o.bucket, o.key, o.version_id, e.byte_start, e.byte_length
       FROM "${names.schema}".events e JOIN "${names.schema}".objects o USING (object_id)
      WHERE e.resource = $1`,
    [resource],
  );
  const row = rows[0] as
    | { bucket: string; key: string; version_id: string; byte_start: string; byte_length: number }
    | undefined;
  if (!row) return undefined;
  const start = Number(row.byte_start);
  const object = await s3.send(
    new GetObjectCommand({
      Bucket: row.bucket,
      Key: row.key,
      VersionId: row.version_id,
      Range: `bytes=${start}-${start + row.byte_length - 1}`,
    }),
  );
  const line = (await object.Body?.transformToString("utf8")) ?? "";
  return { record: parseRecordLine(line.trimEnd()), bucket: row.bucket, key: row.key, versionId: row.version_id };
}

test("a verified call's record reaches an Object-Locked object with the spec's fields; its version cannot be deleted", async () => {
  const tenant = realm.seed.tenantId;
  const allowed = new Metadata();
  allowed.set("authorization", await bearer("app"));
  allowed.set("x-tenant-id", tenant);
  const calledAt = Date.now();
  expect((await touch({ name: "allowed", password: "hunter2-never-stored" }, allowed)).code).toBe(status.OK);

  const refused = new Metadata();
  refused.set("authorization", await bearer("app"));
  refused.set("x-tenant-id", "tenant-of-someone-else");
  expect((await touch({ name: "refused" }, refused)).code).toBe(status.PERMISSION_DENIED);

  const stored = await waitFor("the call's record in the index", () => storedRecordOf("probes/allowed"), {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  const { record } = stored;
  expect(record).toMatchObject({
    source: "endpoint",
    action: "/e2e.Probe/Touch",
    resource: "probes/allowed",
    result: "ok",
    claimed_tenant_id: tenant,
    principal_id: "svc-app",
    tenant_id: tenant,
  });
  expect(record.duration_ms).toBeGreaterThanOrEqual(0);
  expect(Date.parse(record.time)).toBeGreaterThanOrEqual(calledAt - 1_000);
  expect(JSON.stringify(record)).not.toContain("hunter2");
  expect(stored.key.startsWith(`${names.keyPrefix}v1/${names.topic}/dt=`)).toBe(true);

  const denied = await waitFor("the refused call's record", () => storedRecordOf("probes/refused"), {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  expect(denied.record).toMatchObject({
    action: "/e2e.Probe/Touch",
    result: "PERMISSION_DENIED",
    claimed_tenant_id: "tenant-of-someone-else",
    tenant_id: "",
  });

  const target = { Bucket: stored.bucket, Key: stored.key, VersionId: stored.versionId };
  const retention = await s3.send(new GetObjectRetentionCommand(target));
  expect(retention.Retention?.Mode).toBe("COMPLIANCE");
  const retainUntil = retention.Retention?.RetainUntilDate?.getTime() ?? 0;
  expect(Math.abs(retainUntil - (calledAt + RETENTION_DAYS * DAY_MS))).toBeLessThan(60 * 60 * 1_000);
  const head = await s3.send(new HeadObjectCommand({ ...target, ChecksumMode: "ENABLED" }));
  expect(head.ChecksumCRC32).toBeString();

  const deletion = await s3.send(new DeleteObjectCommand(target)).then(
    () => undefined,
    (error: { name?: string; $metadata?: { httpStatusCode?: number } }) => error,
  );
  // AWS answers 403 AccessDenied; MinIO answers 400 InvalidRequest "Object is WORM protected and cannot be
  // overwritten". Either way the version is still there afterwards.
  expect(deletion).toBeDefined();
  expect(["AccessDenied", "InvalidRequest"]).toContain(deletion?.name ?? "");
  expect((await s3.send(new HeadObjectCommand(target))).VersionId).toBe(stored.versionId);
}, 180_000);
