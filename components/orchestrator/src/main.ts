import { runService } from "@svc/common";
import { replicaLogger } from "@svc/component-runtime";
import { parseOrchestratorConfig } from "./config.ts";

// Wiring only: config → orchestrator replica (elector, health, guarded gRPC, supervision); runService owns exit
// codes (2 bad setting, 1 failed start or lost lease) and SIGTERM/SIGINT (graceful stop, Lease released first).
await runService({
  name: "orchestrator",
  parseConfig: () => parseOrchestratorConfig(process.env),
  createLogger: (config) => replicaLogger(config.replica),
  start: async (config, logger) => {
    const { startOrchestrator } = await import("./orchestrator.ts");
    return startOrchestrator(config, logger);
  },
  started: (replica) => ({ grpcPort: replica.grpcPort, healthPort: replica.healthPort }),
});
