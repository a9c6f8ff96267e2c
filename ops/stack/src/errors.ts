/** Stable codes of the local stack runner's failures; tests assert on these, never on message text. */
export const STACK_ERROR_CODES = [
  "STACK_CONFIG_INVALID",
  "STACK_TOOL_MISSING",
  "STACK_INSTALL_FAILED",
  "STACK_START_FAILED",
  "STACK_NOT_READY",
  "STACK_ENV_INCOMPLETE",
] as const;

export type StackErrorCode = (typeof STACK_ERROR_CODES)[number];

export class StackError extends Error {
  readonly code: StackErrorCode;
  /** The service or config field the failure is about, when there is one. */
  readonly subject: string | undefined;

  constructor(code: StackErrorCode, message: string, subject?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StackError";
    this.code = code;
    this.subject = subject;
  }
}
