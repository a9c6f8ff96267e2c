import pino, { type Logger } from "pino";
import type { ReplicaConfig } from "./replica-config.ts";

/**
 * JSON lines on stdout with the component and pod on each (Kubernetes components' habit). Synchronous writes, so
 * the lines before a kill -9 or an exit are not lost: tests and the failover bench read them.
 */
export function replicaLogger(config: ReplicaConfig): Logger {
  return pino(
    { level: config.logLevel, base: { component: config.component, pod: config.pod } },
    pino.destination({ sync: true }),
  );
}
