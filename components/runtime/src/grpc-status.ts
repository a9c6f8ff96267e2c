import { Metadata, type StatusObject, type sendUnaryData, status } from "@grpc/grpc-js";
import { SvcError } from "@svc/common";

/**
 * The status a component's handler answers for a failure: a fenced write or a retryable one (the database or a
 * leader away) is `UNAVAILABLE` — the caller retries, as during a failover (spec: Errors); an error that already
 * is a gRPC status passes through; anything else is `INTERNAL`. The error's code goes in trailer `x-svc-error-code`.
 */
export function grpcStatusOf(error: unknown): StatusObject {
  const metadata = new Metadata();
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SvcError) {
    metadata.set("x-svc-error-code", error.code);
    const unavailable = error.code === "COMPONENT_FENCED" || error.canRetry;
    return { code: unavailable ? status.UNAVAILABLE : status.INTERNAL, details: message, metadata };
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === "number" && code >= 0 && code <= 16) {
    return { code, details: (error as { details?: string }).details ?? message, metadata };
  }
  const sqlState = (error as { errno?: unknown }).errno;
  // PostgreSQL errors (connection failures, timeouts, serialization): retryable by the caller.
  if (typeof sqlState === "string" || (error as { name?: string }).name === "PostgresError") {
    return { code: status.UNAVAILABLE, details: message, metadata };
  }
  return { code: status.INTERNAL, details: message, metadata };
}

/** An error that is a gRPC status already (`grpcStatusOf` passes its code through): a handler's refusal. */
export const grpcRefusal = (code: status, message: string): Error & { code: status } =>
  Object.assign(new Error(message), { code });

/** Answers a unary call with `work`'s result, or with `grpcStatusOf` its failure. */
export function answerUnary<T>(work: () => Promise<T>, done: sendUnaryData<T>): void {
  work().then(
    (response) => done(null, response),
    (error: unknown) => done(grpcStatusOf(error)),
  );
}
