import { join } from "node:path";
import { Admin } from "@platformatic/kafka";
import { type Agent, parseAgentConfig, startAgent } from "@svc/agent";
import { parseQueueConsumerConfig, type QueueConsumer, startConsumer } from "@svc/queue-consumer";
import { bucketPrefix, randomName, stackEnv, topicName } from "@svc/testkit";
import { SQL } from "bun";
import { silent } from "./kms-fixture.ts";

/**
 * The KMS audit instance of one test file: the real agent (reading the KMS's audit log) and queue-consumer (into
 * bucket svc-kms-audit) with the KMS's settings, on a topic, key prefix, index schema and group of the file's own.
 */
export interface KmsAuditInstance {
  topic: string;
  keyPrefix: string;
  indexSchema: string;
  agent: Agent;
  consumer: QueueConsumer;
  /** Stops both, deletes the topics and drops the index schema. */
  remove(): Promise<void>;
}

async function kafkaAdmin<T>(run: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin({ clientId: "kms-test-admin", bootstrapBrokers: stackEnv().kafkaBrokers, retries: 1 });
  try {
    return await run(admin);
  } finally {
    await admin.close().catch(() => {});
  }
}

/** Starts the instance on `auditLog` (the KMS's SVC_AUDIT_LOG_FILE); `dir` holds the agent's checkpoint. */
export async function startKmsAuditInstance(auditLog: string, dir: string): Promise<KmsAuditInstance> {
  const stack = stackEnv();
  const topic = topicName("kms-audit");
  const keyPrefix = bucketPrefix("kms-audit");
  const indexSchema = randomName("t_kms_audit").replaceAll("-", "_");
  await kafkaAdmin((admin) => admin.createTopics({ topics: [topic, `${topic}.dlq`], partitions: 2, replicas: 1 }));
  const agent = await startAgent(
    parseAgentConfig({
      SVC_AGENT_SOURCE: auditLog,
      SVC_AGENT_KAFKA_BROKERS: stack.kafkaBrokers.join(","),
      SVC_AGENT_TOPIC: topic,
      SVC_AGENT_DLQ_TOPIC: `${topic}.dlq`,
      SVC_AGENT_CHECKPOINT_FILE: join(dir, "agent.checkpoint"),
      SVC_AGENT_LINGER_MS: "5",
      SVC_AGENT_POLL_MS: "20",
      SVC_AGENT_LOG_LEVEL: "warn",
    }),
    { logger: silent },
  );
  const consumer = await startConsumer(
    parseQueueConsumerConfig({
      SVC_AUDIT_KAFKA_BROKERS: stack.kafkaBrokers.join(","),
      SVC_AUDIT_TOPIC: topic,
      SVC_AUDIT_GROUP_ID: randomName("svc-test-kms-audit-writer"),
      SVC_AUDIT_BUCKET: "svc-kms-audit",
      SVC_AUDIT_KEY_PREFIX: keyPrefix,
      SVC_AUDIT_S3_ENDPOINT: stack.s3.endpoint,
      SVC_AUDIT_S3_REGION: stack.s3.region,
      SVC_AUDIT_S3_ACCESS_KEY: stack.s3.accessKeyId,
      SVC_AUDIT_S3_SECRET_KEY: stack.s3.secretAccessKey,
      SVC_AUDIT_RETENTION_DAYS: "1",
      SVC_AUDIT_PG_URL: stack.postgresUrl,
      SVC_AUDIT_INDEX_SCHEMA: indexSchema,
      SVC_AUDIT_BATCH_MAX_AGE_MS: "500",
      SVC_AUDIT_KAFKA_SESSION_TIMEOUT_MS: "6000",
      SVC_AUDIT_RETRY_MAX_MS: "500",
      SVC_AUDIT_LOG_LEVEL: "warn",
    }),
    { logger: silent },
  );
  return {
    topic,
    keyPrefix,
    indexSchema,
    agent,
    consumer,
    async remove() {
      await consumer.stop().catch(() => {});
      await agent.stop().catch(() => {});
      await kafkaAdmin((admin) => admin.deleteTopics({ topics: [topic, `${topic}.dlq`] })).catch(() => {});
      const sql = new SQL(stack.postgresUrl);
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${indexSchema}" CASCADE`).catch(() => {});
      await sql.close();
    },
  };
}
