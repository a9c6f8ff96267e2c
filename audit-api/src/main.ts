import { runService } from "@svc/common";
import { pino } from "pino";
import { parseAuditApiConfig } from "./config.ts";

// Wiring only: config → audit API (auth, index, objects, gRPC + REST); runService owns exit codes and signals.
await runService({
  name: "audit-api",
  parseConfig: () => parseAuditApiConfig(process.env),
  createLogger: (config) => pino({ level: config.logLevel, base: { component: "audit-api", pid: process.pid } }),
  start: async (config, logger) => {
    const { startAuditApi } = await import("./audit-api.ts");
    return startAuditApi(config, { logger });
  },
  started: (api) => ({ grpcPort: api.grpcPort, restPort: api.restPort }),
});
