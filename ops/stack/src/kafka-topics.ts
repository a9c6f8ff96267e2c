import { Admin } from "@platformatic/kafka";
import type { StackContext } from "./context.ts";
import { StackError } from "./errors.ts";

export function stackKafkaAdmin(ctx: StackContext, clientId: string): Admin {
  return new Admin({
    clientId,
    bootstrapBrokers: [`127.0.0.1:${ctx.config.kafka.port}`],
    retries: 0,
    connectTimeout: 2_000,
  });
}

/** The innermost errors of a client error (the client nests a response's per-topic errors in `errors`). */
function leavesOf(error: unknown): unknown[] {
  const nested = (error as { errors?: unknown } | undefined)?.errors;
  return Array.isArray(nested) && nested.length > 0 ? nested.flatMap(leavesOf) : [error];
}

/** The broker answered TOPIC_ALREADY_EXISTS for every topic it refused. */
export function onlyAlreadyExists(error: unknown): boolean {
  return leavesOf(error).every((leaf) => (leaf as { apiId?: unknown } | undefined)?.apiId === "TOPIC_ALREADY_EXISTS");
}

/**
 * Creates the configured topics that do not exist yet, each with `topic_partitions` partitions (replication 1: one
 * broker). A topic that exists is left as it is, whatever its partition count. A topic created moments ago (by a
 * client, or another `up`) may not be listed yet: its TOPIC_ALREADY_EXISTS is not a failure. Returns the names that
 * were not listed.
 */
export async function ensureTopics(ctx: StackContext): Promise<string[]> {
  const { topics, topic_partitions } = ctx.config.kafka;
  if (topics.length === 0) return [];
  const admin = stackKafkaAdmin(ctx, "svc-stack-topics");
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
    if (missing.length === 0) return [];
    try {
      await admin.createTopics({ topics: missing, partitions: topic_partitions, replicas: 1 });
    } catch (cause) {
      if (!onlyAlreadyExists(cause)) {
        throw new StackError("STACK_START_FAILED", `kafka: could not create topics ${missing.join(", ")}`, "kafka", {
          cause,
        });
      }
    }
    return missing;
  } finally {
    await admin.close().catch(() => {});
  }
}
