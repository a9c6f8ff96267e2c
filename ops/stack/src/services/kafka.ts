import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Admin } from "@platformatic/kafka";
import type { StackContext, StackService } from "../context.ts";
import { ensureJava, MAVEN_DEPENDENCY_PLUGIN, mavenFetch } from "../installers.ts";
import { kafkaClusterId } from "../kafka-cluster-id.ts";
import { runTool } from "../run-tool.ts";
import { startServer } from "../start-server.ts";
import { VERSIONS } from "../versions.ts";

const POM = join(import.meta.dir, "..", "..", "..", "maven", "kafka", "pom.xml");

const libsDir = (ctx: StackContext) => join(ctx.cacheDir, `kafka-${VERSIONS.kafka}`, "libs");

function serverProperties(ctx: StackContext, logDir: string): string {
  const { port, controller_port } = ctx.config.kafka;
  return [
    "process.roles=broker,controller",
    "node.id=1",
    `controller.quorum.voters=1@127.0.0.1:${controller_port}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller_port}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    "controller.listener.names=CONTROLLER",
    "inter.broker.listener.name=PLAINTEXT",
    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    `log.dirs=${logDir}`,
    "num.partitions=1",
    "offsets.topic.replication.factor=1",
    "transaction.state.log.replication.factor=1",
    "transaction.state.log.min.isr=1",
    "share.coordinator.state.topic.replication.factor=1",
    "share.coordinator.state.topic.min.isr=1",
    "group.initial.rebalance.delay.ms=0",
    "auto.create.topics.enable=false",
    "",
  ].join("\n");
}

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

export const kafka: StackService = {
  name: "kafka",
  after: [],

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
    writeFileSync(props, serverProperties(ctx, dataDir));
    writeFileSync(log4j, LOG4J2);
    const jvm = ["-Xms256m", "-Xmx768m", `-Dlog4j2.configurationFile=${log4j}`, "-cp", classpath];
    if (!existsSync(join(dataDir, "meta.properties"))) {
      task.update(1, "formatting the KRaft log directory");
      await runTool(
        "kafka",
        javaBin,
        [...jvm, "kafka.tools.StorageTool", "format", `--cluster-id=${kafkaClusterId()}`, "-c", props],
        {
          env: ctx.env,
        },
      );
    }
    task.update(2, "starting broker and controller");
    const daemon = await startServer(
      ctx,
      this,
      {
        command: javaBin,
        args: [...jvm, "kafka.Kafka", props],
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    task.done(this.address(ctx));
    return daemon;
  },

  async probe(ctx) {
    const admin = new Admin({
      clientId: "svc-stack-probe",
      bootstrapBrokers: [`127.0.0.1:${ctx.config.kafka.port}`],
      retries: 0,
      connectTimeout: 2_000,
    });
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
