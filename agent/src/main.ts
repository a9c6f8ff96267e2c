import { parseAgentConfig } from "./config.ts";

// Wiring only: config → agent (Kafka producer, source, metrics) → signal handling.
let config: ReturnType<typeof parseAgentConfig>;
try {
  config = parseAgentConfig(process.env);
} catch (error) {
  process.stderr.write(`audit-logagent: ${(error as Error).message}\n`);
  process.exit(2);
}

// Loaded after the settings are checked: a bad setting is reported without loading the Kafka client.
const { default: pino } = await import("pino");
const { startAgent } = await import("./agent.ts");
const logger = pino({ level: config.logLevel, base: { component: "audit-logagent", pid: process.pid } });
let agent: Awaited<ReturnType<typeof startAgent>>;
try {
  agent = await startAgent(config, { logger });
} catch (error) {
  logger.fatal({ err: error }, "agent did not start");
  process.exit(1);
}

const shutdown = (signal: string) => {
  logger.info({ signal }, "shutting down");
  agent.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      logger.error({ err: error }, "shutdown incomplete");
      process.exit(1);
    },
  );
};
process.once("SIGTERM", () => shutdown("SIGTERM"));
process.once("SIGINT", () => shutdown("SIGINT"));

agent.done.then(
  () => process.exit(0),
  () => process.exit(1),
);
