// The KMS's own count of the calls a bench row made, from its admin port's /metrics
// (svc_grpc_server_calls_total{method, code}: the status each call was actually sent). A client that reads no gRPC
// status (h2load) counts a refused call (UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT, …: all HTTP 200 with
// grpc-status in the trailers) as a success; the row is valid only when the KMS answered OK at least as many calls
// as the client counted and refused none. The calls in flight when a client's duration ended (at most its in-flight
// count) may be answered OK after it stopped counting, CANCELLED, or UNIMPLEMENTED — grpc-js's answer to a unary
// stream closed before its message, which h2load leaves when it stops (with a server interceptor counting them, OK
// beyond h2load's count plus UNIMPLEMENTED came to exactly the 64 in flight; the KMS's handler-level count does not
// see those that never reached a handler).
import { status } from "@grpc/grpc-js";
import { metricValue } from "@svc/component-runtime/testing";

/** Every gRPC status name (`OK`, `CANCELLED`, …, `UNAUTHENTICATED`): the values the counter's `code` label takes. */
const CODES = Object.values(status).filter((name): name is string => typeof name === "string");

/** The KMS's calls of `method` (a path: `/svc.kms.v1.KmsService/Encrypt`) so far, by status code. */
export async function serverCalls(metricsUrl: string, ca: string, method: string): Promise<Map<string, number>> {
  const response = await fetch(metricsUrl, { tls: { ca } });
  if (response.status !== 200) throw new Error(`${metricsUrl} answered ${response.status}`);
  const text = await response.text();
  const counts = new Map<string, number>();
  for (const code of CODES) {
    const count = metricValue(text, "svc_grpc_server_calls_total", { method, code });
    if (count !== undefined) counts.set(code, count);
  }
  return counts;
}

/** What the KMS answers calls cut at a client's end with: cancelled, or ended before their message came. */
const CUT_AT_END = new Set(["CANCELLED", "UNIMPLEMENTED"]);

export interface ServerCheck {
  /** Calls the KMS answered OK during the row. */
  ok: number;
  /** The other codes it sent during the row, e.g. `UNIMPLEMENTED 34` (empty when none). */
  other: string;
  /** OK ≥ the client's successes, no refusal, and no more calls cut at the end than were in flight. */
  valid: boolean;
}

/**
 * What the KMS answered between two `serverCalls` readings, against the `succeeded` calls the client counted with
 * at most `inFlight` calls outstanding.
 */
export function checkServerCalls(
  before: Map<string, number>,
  after: Map<string, number>,
  succeeded: number,
  inFlight: number,
): ServerCheck {
  const delta = new Map<string, number>();
  for (const [code, count] of after) {
    const added = count - (before.get(code) ?? 0);
    if (added > 0) delta.set(code, added);
  }
  const ok = delta.get("OK") ?? 0;
  const others = [...delta].filter(([code]) => code !== "OK");
  const refused = others.filter(([code]) => !CUT_AT_END.has(code));
  const cut = others.filter(([code]) => CUT_AT_END.has(code)).reduce((sum, [, count]) => sum + count, 0);
  return {
    ok,
    other: others.map(([code, count]) => `${code} ${count}`).join(", "),
    valid: ok >= succeeded && refused.length === 0 && cut + (ok - succeeded) <= inFlight,
  };
}
