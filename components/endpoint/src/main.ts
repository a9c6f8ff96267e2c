import { runService } from "@svc/common";
import { replicaLogger } from "@svc/component-runtime";
import { parseEndpointConfig } from "./config.ts";

// Wiring only: config → endpoint replica (routes to each component's leader, auth, audit, health, /admin/*);
// runService owns exit codes (2 bad setting, 1 failed start) and signals (SIGTERM/SIGINT stop, SIGHUP is ignored).
await runService({
  name: "endpoint",
  parseConfig: () => parseEndpointConfig(process.env),
  // With SVC_AUDIT_LOG_SINK=stdout (the default) stdout is the audit JSONL the agent reads: the logs go to stderr.
  createLogger: (config) => replicaLogger(config.replica, { fd: config.audit.sink === "stdout" ? 2 : 1 }),
  start: async (config, logger) => {
    const { startEndpoint } = await import("./endpoint.ts");
    return startEndpoint(config, logger);
  },
  started: (endpoint) => ({
    grpcPort: endpoint.grpcPort,
    healthPort: endpoint.healthPort,
    adminPort: endpoint.adminPort,
  }),
});
