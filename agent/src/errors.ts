import { SvcError } from "@svc/common";

/** Stable codes of the log agent's failures; callers and tests branch on these, never on message text. */
export const AGENT_ERROR_CODES = [
  /** An environment variable has a bad value; `subject` is its name. */
  "AGENT_CONFIG_INVALID",
  /** The checkpoint file exists but cannot be read or parsed; `subject` is its path. */
  "AGENT_CHECKPOINT_UNREADABLE",
  /** The checkpoint could not be written (temp file, fsync or rename); shipping stops until it can. */
  "AGENT_CHECKPOINT_WRITE_FAILED",
  /** The source file exists but cannot be opened or read; `subject` is its path. */
  "AGENT_SOURCE_UNREADABLE",
  /** Kafka refused or did not acknowledge a batch; `canRetry` says whether sending it again may succeed. */
  "AGENT_KAFKA_SEND_FAILED",
  /** A graceful shutdown ran out of time before every record read was acknowledged (they are read again). */
  "AGENT_SHUTDOWN_TIMEOUT",
  /** The metrics and health listener could not be started; `subject` is the address. */
  "AGENT_METRICS_LISTEN_FAILED",
] as const;

export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

export class AgentError extends SvcError<AgentErrorCode> {}
