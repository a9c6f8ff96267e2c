import pino, { type Logger } from "pino";
import type { ReplicaConfig } from "./replica-config.ts";

export interface ReplicaLoggerOptions {
  /**
   * The file descriptor the lines go to: 1 (stdout, the default) or 2 (stderr). A service whose stdout carries
   * something else (endpoint's audit records with `SVC_AUDIT_LOG_SINK=stdout`) logs to 2.
   */
  fd?: 1 | 2;
}

/**
 * JSON lines with the component and pod on each (Kubernetes components' habit), on stdout unless told otherwise.
 * Synchronous writes, so the lines before a kill -9 or an exit are not lost: tests and the failover bench read them.
 */
export function replicaLogger(config: ReplicaConfig, options: ReplicaLoggerOptions = {}): Logger {
  return pino(
    { level: config.logLevel, base: { component: config.component, pod: config.pod } },
    pino.destination({ dest: options.fd ?? 1, sync: true }),
  );
}
