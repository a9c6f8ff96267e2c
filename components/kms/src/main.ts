import cluster from "node:cluster";
import { runService } from "@svc/common";
import { pino } from "pino";
import { parseKmsConfig } from "./config.ts";

// Wiring only: config → KMS (key store, unseal, TLS, gRPC + admin HTTP); runService owns exit codes and signals.
// With SVC_KMS_WORKERS > 1 this process is the primary and node:cluster runs this file again in each worker
// (docs/kms.md "Workers"). Logs go to stderr, written synchronously: stdout is left to nothing else (the audit emitter
// writes to its own file by default), and an asynchronous destination lost the line saying why the process exits.
const worker = cluster.isWorker ? cluster.worker?.id : undefined;
await runService({
  name: worker === undefined ? "kms" : "kms-worker",
  parseConfig: () => parseKmsConfig(process.env),
  createLogger: (config) =>
    pino(
      { level: config.logLevel, base: { component: "kms", pid: process.pid, ...(worker ? { worker } : {}) } },
      pino.destination({ dest: 2, sync: true }),
    ),
  start: async (config, logger) => {
    if (worker !== undefined) {
      const { processChannel, startKmsWorker } = await import("./kms-worker.ts");
      return startKmsWorker(config, { logger, channel: processChannel() });
    }
    if (config.workers > 1) {
      const { startKmsPrimary } = await import("./kms-primary.ts");
      return startKmsPrimary(config, { logger });
    }
    const { startKms } = await import("./kms.ts");
    return startKms(config, { logger });
  },
  started: (kms) => ({
    grpcPort: kms.grpcPort,
    httpPort: kms.httpPort,
    unsealMs: Math.round(kms.unsealMs),
    ...("workerPids" in kms ? { workerPids: kms.workerPids } : {}),
  }),
});
