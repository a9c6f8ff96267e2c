import { runService } from "@svc/common";
import { replicaLogger } from "@svc/component-runtime";
import { parseComputeConfig } from "./config.ts";

// Wiring only: config → compute replica (elector, health, guarded gRPC, AddCompute + heartbeats + shard loading);
// runService owns exit codes (2 bad setting, 1 failed start or lost lease) and SIGTERM/SIGINT.
await runService({
  name: "compute",
  parseConfig: () => parseComputeConfig(process.env),
  createLogger: (config) => replicaLogger(config.replica),
  start: async (config, logger) => {
    const { startCompute } = await import("./compute.ts");
    return startCompute(config, logger);
  },
  started: (replica) => ({ grpcPort: replica.grpcPort, healthPort: replica.healthPort }),
});
