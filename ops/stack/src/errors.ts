import { SvcAggregateError, SvcError } from "@svc/common";

/** Stable codes of the local stack runner's failures; tests assert on these, never on message text. */
export const STACK_ERROR_CODES = [
  "STACK_CONFIG_INVALID",
  "STACK_TOOL_MISSING",
  "STACK_INSTALL_FAILED",
  "STACK_START_FAILED",
  "STACK_NOT_READY",
  "STACK_ENV_INCOMPLETE",
  "STACK_PORT_IN_USE",
  "STACK_LOCKED",
  "STACK_FAILURES",
] as const;

export type StackErrorCode = (typeof STACK_ERROR_CODES)[number];

/** A server that is not ready yet, or a stack another `up` holds, may be fine on a later try. */
const RETRYABLE: ReadonlySet<StackErrorCode> = new Set(["STACK_NOT_READY", "STACK_LOCKED"]);

/** `subject`: the service or config field the failure is about. */
export class StackError extends SvcError<StackErrorCode> {
  constructor(code: StackErrorCode, message: string, subject?: string, options?: ErrorOptions) {
    super(code, message, { subject, canRetry: RETRYABLE.has(code), cause: options?.cause });
  }
}

/** Several servers failed in one step (the rejected outcomes of an `allSettled`); each one is in `errors`. */
export class StackAggregateError extends SvcAggregateError<"STACK_FAILURES"> {
  constructor(errors: readonly unknown[], summary: string) {
    super("STACK_FAILURES", errors, summary);
  }
}
