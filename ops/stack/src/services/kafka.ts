import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StackContext, StackService } from "../context.ts";
import { ensureJava, MAVEN_DEPENDENCY_PLUGIN, mavenFetch } from "../installers.ts";
import { dropsJvmEnv, heapFlags } from "../jvm.ts";
import { kafkaClusterId } from "../kafka-cluster-id.ts";
import { serverProperties } from "../kafka-properties.ts";
import { ensureTopics, stackKafkaAdmin } from "../kafka-topics.ts";
import { runTool } from "../run-tool.ts";
import { serverEnv } from "../server-env.ts";
import { startServer } from "../start-server.ts";
import { VERSIONS } from "../versions.ts";

const POM = join(import.meta.dir, "..", "..", "..", "maven", "kafka", "pom.xml");

const libsDir = (ctx: StackContext) => join(ctx.cacheDir, `kafka-${VERSIONS.kafka}`, "libs");

const LOG4J2 = `
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
`;

async function java(ctx: StackContext, task: Parameters<StackService["install"]>[1]): Promise<string> {
  return join(await ensureJava(task, 17, ctx.env), "bin", "java");
}

/** Formatting the log directory is a short tool run: it needs no broker-sized heap. */
const STORAGE_TOOL_HEAP_MB = 256;

export const kafka: StackService = {
  name: "kafka",
  after: [],
  readiness: { timeoutMs: 120_000, intervalMs: 500 },
  ports: (ctx) => [ctx.config.kafka.port, ctx.config.kafka.controller_port],

  async install(ctx, task) {
    await java(ctx, task);
    if (existsSync(join(libsDir(ctx), `kafka_2.13-${VERSIONS.kafka}.jar`))) {
      task.done(`Kafka ${VERSIONS.kafka} (cached)`);
      return;
    }
    task.update(0, "resolving Kafka from Maven Central");
    await mavenFetch(ctx.env, task, "kafka", [
      "-f",
      POM,
      `-Dkafka.version=${VERSIONS.kafka}`,
      `${MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`,
      "-DincludeScope=runtime",
      `-DoutputDirectory=${libsDir(ctx)}`,
    ]);
    task.done(`Kafka ${VERSIONS.kafka}`);
  },

  async start(ctx, task) {
    const home = join(ctx.stateDir, "kafka");
    const dataDir = join(home, "data");
    const props = join(home, "server.properties");
    const log4j = join(home, "log4j2.properties");
    const javaBin = await java(ctx, task);
    const classpath = `${libsDir(ctx)}/*`;
    mkdirSync(home, { recursive: true });
    writeFileSync(props, serverProperties(ctx.config.kafka, dataDir));
    writeFileSync(log4j, LOG4J2);
    const jvm = [`-Dlog4j2.configurationFile=${log4j}`, "-cp", classpath];
    if (!existsSync(join(dataDir, "meta.properties"))) {
      task.update(1, "formatting the KRaft log directory");
      const format = ["kafka.tools.StorageTool", "format", `--cluster-id=${kafkaClusterId()}`, "-c", props];
      await runTool("kafka", javaBin, [...heapFlags(STORAGE_TOOL_HEAP_MB), ...jvm, ...format], {
        env: serverEnv(ctx.env, {}, dropsJvmEnv),
      });
    }
    task.update(2, "starting broker and controller");
    const daemon = await startServer(ctx, this, {
      command: javaBin,
      args: [...heapFlags(ctx.config.kafka.heap_mb), ...jvm, "kafka.Kafka", props],
      dropEnv: dropsJvmEnv,
    });
    task.done(this.address(ctx));
    return daemon;
  },

  async provision(ctx, task) {
    const created = await ensureTopics(ctx);
    task.done(created.length === 0 ? "topics exist" : `created ${created.join(", ")}`);
  },

  async probe(ctx) {
    const admin = stackKafkaAdmin(ctx, "svc-stack-probe");
    try {
      await admin.listTopics({ includeInternals: true });
      return true;
    } catch {
      return false;
    } finally {
      await admin.close().catch(() => {});
    }
  },

  address: (ctx) => `127.0.0.1:${ctx.config.kafka.port}`,
  exports: (ctx) => ({ SVC_STACK_KAFKA_BROKERS: `127.0.0.1:${ctx.config.kafka.port}` }),
};
