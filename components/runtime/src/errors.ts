import { SvcError } from "@svc/common";

/** Every code of the component runtime (one list; tests assert on `.code`). */
export const RUNTIME_ERROR_CODES = [
  /** A setting is wrong; `subject` is the environment variable. */
  "RUNTIME_CONFIG_INVALID",
  /** The leader could not renew its lease: the process must exit (the platform restarts it). */
  "RUNTIME_LEADERSHIP_LOST",
  /** A leader-only write carried a term that is no longer the component's: refused by the store. */
  "COMPONENT_FENCED",
  /** Every replica of a component answered UNAVAILABLE or could not be reached. */
  "RUNTIME_NO_LEADER",
  /** The model's tables could not be created. */
  "RUNTIME_SCHEMA_FAILED",
] as const;

export type RuntimeErrorCode = (typeof RUNTIME_ERROR_CODES)[number];

export class RuntimeError extends SvcError<RuntimeErrorCode> {}
