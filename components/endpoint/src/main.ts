import { runService } from "@svc/common";
import { replicaLogger } from "@svc/component-runtime";
import { parseEndpointConfig } from "./config.ts";

// Wiring only: config → endpoint replica (routes to each component's leader, auth, audit, health, /admin/*);
// runService owns exit codes (2 bad setting, 1 failed start) and SIGTERM/SIGINT.
await runService({
  name: "endpoint",
  parseConfig: () => parseEndpointConfig(process.env),
  createLogger: (config) => replicaLogger(config.replica),
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
