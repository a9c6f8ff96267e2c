export { backoffMs } from "./src/backoff.ts";
export { ByteSlots } from "./src/byte-slots.ts";
export {
  exitAfterCleanup,
  type SignalExit,
  TERMINATING_SIGNALS,
  type TerminatingSignal,
} from "./src/exit-on-signal.ts";
export { ExpiringLru, type ExpiringLruOptions } from "./src/expiring-lru.ts";
export { bindGrpcServer, stopGrpcServer } from "./src/grpc-server.ts";
export { decodeGzipBody } from "./src/gzip-body.ts";
export { LISTEN_HOST_PATTERN } from "./src/listen-host.ts";
export { isLoopbackHost } from "./src/loopback-host.ts";
export {
  type HealthReport,
  type MetricsServer,
  type MetricsServerOptions,
  type MetricsSource,
  serveMetrics,
} from "./src/metrics-server.ts";
export { isAlive } from "./src/process-alive.ts";
export { readJsonLines, readLines } from "./src/read-lines.ts";
export { type CommandRun, runCommand } from "./src/run-command.ts";
export {
  type RunnableService,
  type RunServiceOptions,
  runService,
  SERVICE_EXIT,
  type ServiceLogger,
} from "./src/run-service.ts";
export {
  readSecretSetting,
  type SecretSettingError,
  type SecretSettingOptions,
} from "./src/secret-setting.ts";
export { rejectionsOf, SvcAggregateError, SvcError, type SvcErrorOptions } from "./src/svc-error.ts";
export { type WaitOptions, waitFor } from "./src/wait-for.ts";
