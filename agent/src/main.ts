import { runService } from "@svc/common";
import { pino } from "pino";
import { parseAgentConfig } from "./config.ts";

// Wiring only: config → agent (Kafka producer, source, metrics); runService owns exit codes and signals.
// The agent (with the Kafka client) loads after the settings are checked, so a bad one is reported at once.
await runService({
  name: "audit-logagent",
  parseConfig: () => parseAgentConfig(process.env),
  createLogger: (config) => pino({ level: config.logLevel, base: { component: "audit-logagent", pid: process.pid } }),
  start: async (config, logger) => {
    const { startAgent } = await import("./agent.ts");
    return startAgent(config, { logger });
  },
});
