import { AgentError } from "./errors.ts";

/** Error codes of @platformatic/kafka that sending again cannot fix (bad options, unsupported broker, bad auth). */
const PERMANENT_CODES = new Set([
  "PLT_KFK_USER",
  "PLT_KFK_UNSUPPORTED",
  "PLT_KFK_UNSUPPORTED_API",
  "PLT_KFK_UNSUPPORTED_COMPRESSION",
  "PLT_KFK_UNSUPPORTED_FORMAT",
  "PLT_KFK_AUTHENTICATION",
]);

function leaves(error: unknown): unknown[] {
  const nested = (error as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(nested) && nested.length > 0) return nested.flatMap(leaves);
  return [error];
}

/**
 * Whether sending the same batch again may succeed. A broker protocol error says so itself (`canRetry`); network
 * errors and timeouts may; a usage error or an unsupported feature will not. An aggregate is retriable only when
 * every one of its failures is.
 */
export function canRetrySend(error: unknown): boolean {
  return leaves(error).every((leaf) => {
    if (!(leaf instanceof Error)) return true;
    const { code, canRetry } = leaf as Error & { code?: unknown; canRetry?: unknown };
    // The client reports a topic the broker does not know as a usage error; it may be created any moment (or be
    // recreated after a broker outage), so the batch waits for it like for a broker that is down.
    if (code === "PLT_KFK_USER" && leaf.message.startsWith("Unknown topic")) return true;
    // With several batches in flight, one that failed makes the broker refuse the next ones' sequence numbers;
    // the sender (record-sender.ts) takes a new producer id after an error, so sending them again succeeds.
    // (DUPLICATE_SEQUENCE_NUMBER never gets here: the sender counts it as acknowledged.)
    if ((leaf as { apiId?: unknown }).apiId === "OUT_OF_ORDER_SEQUENCE_NUMBER") return true;
    if (typeof canRetry === "boolean") return canRetry;
    return typeof code !== "string" || !PERMANENT_CODES.has(code);
  });
}

/** The messages of an error's innermost failures (the client nests a response's errors), deduplicated. */
function describe(error: unknown): string {
  const texts = leaves(error).map((leaf) => {
    if (!(leaf instanceof Error)) return String(leaf);
    const { apiId, code } = leaf as Error & { apiId?: unknown; code?: unknown };
    return `${leaf.message}${typeof apiId === "string" ? ` (${apiId})` : typeof code === "string" ? ` (${code})` : ""}`;
  });
  return [...new Set(texts)].join("; ");
}

export function sendError(cause: unknown, topic: string): AgentError {
  const message = describe(cause);
  return new AgentError("AGENT_KAFKA_SEND_FAILED", `sending to ${topic} failed: ${message}`, {
    subject: topic,
    canRetry: canRetrySend(cause),
    cause,
  });
}
