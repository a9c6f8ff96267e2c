import { runService } from "@svc/common";
import { replicaLogger } from "@svc/component-runtime";
import { parseShaperConfig } from "./config.ts";

// Wiring only: config → shaper replica (elector if opted in, health, guarded gRPC: keys and jobs); runService owns
// exit codes and SIGTERM/SIGINT (Lease released first, in-flight jobs finish within the grace period).
await runService({
  name: "shaper",
  parseConfig: () => parseShaperConfig(process.env),
  createLogger: (config) => replicaLogger(config.replica),
  start: async (config, logger) => {
    const { startShaper } = await import("./shaper.ts");
    return startShaper(config, logger);
  },
  started: (replica) => ({ grpcPort: replica.grpcPort, healthPort: replica.healthPort }),
});
