/**
 * The one error base of the project (after platformatic/kafka's `src/errors.ts` and jose's `util/errors.ts`):
 * a stable, package-prefixed `code` that callers and tests branch on, a `canRetry` flag that retry loops read
 * (never the message), the `subject` the failure is about, and the underlying `cause`.
 */
export interface SvcErrorOptions {
  /** What the failure is about: a config field, claim, header, file path, service or API path. */
  subject?: string;
  /** Whether the same operation may succeed when tried again later. Defaults to false. */
  canRetry?: boolean;
  cause?: unknown;
}

export abstract class SvcError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly canRetry: boolean;
  readonly subject: string | undefined;

  constructor(code: Code, message: string, options: SvcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.canRetry = options.canRetry ?? false;
    this.subject = options.subject;
  }
}

/**
 * Several failures at once (the rejected outcomes of an `allSettled`): every one is kept in `errors`, the message
 * lists them all, and the aggregate can be retried only when each of its parts can.
 */
export class SvcAggregateError<Code extends string = string> extends AggregateError {
  readonly code: Code;
  readonly canRetry: boolean;
  declare readonly errors: unknown[];

  constructor(code: Code, errors: readonly unknown[], summary: string) {
    const lines = errors.map((error) => `  - ${error instanceof Error ? error.message : String(error)}`);
    super([...errors], `${summary} (${errors.length} failures):\n${lines.join("\n")}`);
    this.name = new.target.name;
    this.code = code;
    this.canRetry = errors.length > 0 && errors.every((error) => error instanceof SvcError && error.canRetry);
  }
}

/** The reasons of the rejected outcomes of `Promise.allSettled`, in input order. */
export function rejectionsOf(outcomes: readonly PromiseSettledResult<unknown>[]): unknown[] {
  return outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected").map((o) => o.reason);
}
