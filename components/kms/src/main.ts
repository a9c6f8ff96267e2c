import { runService } from "@svc/common";
import { pino } from "pino";
import { parseKmsConfig } from "./config.ts";

// Wiring only: config → KMS (key store, unseal, TLS, gRPC + admin HTTP); runService owns exit codes and signals.
// Logs go to stderr, written synchronously: stdout is left to nothing else (the audit emitter writes to its own file
// by default), and an asynchronous destination lost the line saying why the process exits (exit 1 with no reason).
await runService({
  name: "kms",
  parseConfig: () => parseKmsConfig(process.env),
  createLogger: (config) =>
    pino(
      { level: config.logLevel, base: { component: "kms", pid: process.pid } },
      pino.destination({ dest: 2, sync: true }),
    ),
  start: async (config, logger) => {
    const { startKms } = await import("./kms.ts");
    return startKms(config, { logger });
  },
  started: (kms) => ({ grpcPort: kms.grpcPort, httpPort: kms.httpPort, unsealMs: Math.round(kms.unsealMs) }),
});
