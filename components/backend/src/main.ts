import { runService } from "@svc/common";
import { replicaLogger } from "@svc/component-runtime";
import { parseBackendConfig } from "./config.ts";

// Wiring only: config → backend replica (elector, health, guarded gRPC, leader duties over task_queue); runService
// owns exit codes (2 bad setting, 1 failed start or lost lease) and SIGTERM/SIGINT (Lease released first).
await runService({
  name: "backend",
  parseConfig: () => parseBackendConfig(process.env),
  createLogger: (config) => replicaLogger(config.replica),
  start: async (config, logger) => {
    const { startBackend } = await import("./backend.ts");
    return startBackend(config, logger);
  },
  started: (replica) => ({ grpcPort: replica.grpcPort, healthPort: replica.healthPort }),
});
