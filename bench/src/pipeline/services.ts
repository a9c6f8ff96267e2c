import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { jscHeapEnv } from "@svc/stack";
import { BenchError } from "../errors.ts";
import { spawnTracked, type TrackedProcess } from "../spawn-tracked.ts";

/** The repository root (bench/src/pipeline → ../../..). */
export const REPO_ROOT = resolve(import.meta.dir, "../../..");
export const AGENT_MAIN = join(REPO_ROOT, "agent/src/main.ts");
export const CONSUMER_MAIN = join(REPO_ROOT, "queue-consumer/src/main.ts");

/**
 * Flags for `bun` before `run` (`SVC_BENCH_BUN_FLAGS`, space-separated, e.g. `--smol`), to compare runtime settings
 * in the same bench; empty by default.
 */
function bunFlags(): string[] {
  return (process.env.SVC_BENCH_BUN_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
}

/**
 * Settings added to a service's environment for a comparison (`SVC_BENCH_AGENT_ENV`, `SVC_BENCH_CONSUMER_ENV`:
 * space-separated `NAME=value` pairs, e.g. `SVC_AUDIT_WRITE_CONCURRENCY=4`); they override the bench's own. A pair
 * without `=` or a name is refused, so a typo does not measure the defaults under another label.
 */
export function benchEnv(variable: string, value = process.env[variable] ?? ""): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of value.split(" ").filter((part) => part !== "")) {
    const at = pair.indexOf("=");
    if (at <= 0) {
      throw new BenchError(
        "BENCH_ARGS_INVALID",
        `${variable}: expected NAME=value pairs, got ${JSON.stringify(pair)}`,
        {
          subject: variable,
        },
      );
    }
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/** Whether our two services exist yet (the bench runs the peer rows without them). */
export function servicesPresent(): { agent: boolean; consumer: boolean } {
  return { agent: existsSync(AGENT_MAIN), consumer: existsSync(CONSUMER_MAIN) };
}

export interface AgentRun {
  source: string;
  checkpointFile: string;
  brokers: string;
  topic: string;
  dlqTopic: string;
  env?: Record<string, string>;
}

/** `bun run agent/src/main.ts` as a service, configured only by its SVC_AGENT_* environment. */
export function spawnAgent(run: AgentRun): TrackedProcess {
  return spawnTracked("agent", [process.execPath, ...bunFlags(), "run", AGENT_MAIN], {
    cwd: REPO_ROOT,
    env: {
      SVC_AGENT_SOURCE: run.source,
      SVC_AGENT_CHECKPOINT_FILE: run.checkpointFile,
      SVC_AGENT_KAFKA_BROKERS: run.brokers,
      SVC_AGENT_TOPIC: run.topic,
      SVC_AGENT_DLQ_TOPIC: run.dlqTopic,
      SVC_AGENT_LOG_LEVEL: "warn",
      SVC_AGENT_POLL_MS: "20",
      // Heap sized as deployed (jscHeapEnv); SVC_BENCH_AGENT_JSC_RAM / SVC_BENCH_CONSUMER_JSC_RAM override it for a
      // comparison (bytes, 0 = JSC's default).
      ...jscHeapEnv(process.env.SVC_BENCH_AGENT_JSC_RAM),
      ...run.env,
      ...benchEnv("SVC_BENCH_AGENT_ENV"),
    },
  });
}

export interface ConsumerRun {
  brokers: string;
  topic: string;
  groupId: string;
  s3: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
  bucket: string;
  keyPrefix: string;
  pgUrl: string;
  indexSchema: string;
  batchMaxAgeMs: number;
  env?: Record<string, string>;
}

/** The SVC_AUDIT_* environment of a writer for `run` (a spawned service's, or an in-process consumer's config). */
export function consumerEnv(run: ConsumerRun): Record<string, string> {
  return {
    SVC_AUDIT_KAFKA_BROKERS: run.brokers,
    SVC_AUDIT_TOPIC: run.topic,
    SVC_AUDIT_GROUP_ID: run.groupId,
    SVC_AUDIT_BUCKET: run.bucket,
    SVC_AUDIT_KEY_PREFIX: run.keyPrefix,
    SVC_AUDIT_S3_ENDPOINT: run.s3.endpoint,
    SVC_AUDIT_S3_REGION: run.s3.region,
    SVC_AUDIT_S3_ACCESS_KEY: run.s3.accessKeyId,
    SVC_AUDIT_S3_SECRET_KEY: run.s3.secretAccessKey,
    SVC_AUDIT_RETENTION_DAYS: "1",
    SVC_AUDIT_PG_URL: run.pgUrl,
    SVC_AUDIT_INDEX_SCHEMA: run.indexSchema,
    SVC_AUDIT_BATCH_MAX_AGE_MS: String(run.batchMaxAgeMs),
    SVC_AUDIT_LOG_LEVEL: "warn",
    ...jscHeapEnv(process.env.SVC_BENCH_CONSUMER_JSC_RAM),
    ...run.env,
    ...benchEnv("SVC_BENCH_CONSUMER_ENV"),
  };
}

/** `bun run queue-consumer/src/main.ts` as a service, configured only by its SVC_AUDIT_* environment. */
export function spawnConsumer(run: ConsumerRun, name = "consumer"): TrackedProcess {
  return spawnTracked(name, [process.execPath, ...bunFlags(), "run", CONSUMER_MAIN], {
    cwd: REPO_ROOT,
    env: consumerEnv(run),
  });
}
