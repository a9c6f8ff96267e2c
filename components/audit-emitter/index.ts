export { annotate, type CallAnnotation } from "./src/annotate.ts";
export {
  type AuditEmitter,
  type AuditEmitterOptions,
  createAuditEmitter,
  type EmitterStats,
  type EventFields,
  type RecordInput,
} from "./src/audit-emitter.ts";
export {
  AUDIT_UNAVAILABLE_STATUS,
  type AuditInterceptorOptions,
  auditInterceptor,
  type ResourceOf,
  resourcesOf,
} from "./src/audit-interceptor.ts";
export { linkHandlerCall, linkRefusedCaller, withAuditIdentity } from "./src/call-link.ts";
export {
  EMITTER_DEFAULTS,
  EMITTER_LIMITS,
  type EmitterConfig,
  type EmitterEnv,
  EmitterEnvSchema,
  FAIL_MODES,
  type FailMode,
  loadEmitterConfig,
  SINK_KINDS,
  type SinkKind,
} from "./src/config.ts";
export { AUDIT_EMITTER_ERROR_CODES, AuditEmitterError, type AuditEmitterErrorCode } from "./src/errors.ts";
export { AUDIT_FILE_MODE, FileTarget } from "./src/file-target.ts";
export { JsonlSink } from "./src/jsonl-sink.ts";
export { KMS_EVENT_ACTIONS, KMS_EVENT_KINDS, type KmsEventKind } from "./src/kms-events.ts";
export {
  looksLikeSecret,
  MAX_ATTRIBUTE_VALUE_LENGTH,
  MAX_ATTRIBUTES,
  REDACTED,
  redactValue,
  sanitizeAttributes,
} from "./src/redact.ts";
export type { SinkTarget } from "./src/sink-target.ts";
export { resultOf, statusCodeOf } from "./src/status-name.ts";
export { StreamTarget, stdoutTarget, type WritableLike } from "./src/stream-target.ts";
