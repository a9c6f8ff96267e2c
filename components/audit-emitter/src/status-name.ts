import { status } from "@grpc/grpc-js";

/** The `result` of a call: `ok` for status OK, else the gRPC status name (`PERMISSION_DENIED`, `UNAVAILABLE`, ...). */
export function resultOf(code: number): string {
  if (code === status.OK) return "ok";
  const name = status[code];
  return typeof name === "string" ? name : "UNKNOWN";
}

/** The status code carried by what a handler answered with; grpc-js itself reads a missing one as UNKNOWN. */
export function statusCodeOf(error: unknown): number {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
  return typeof code === "number" && typeof status[code] === "string" ? code : status.UNKNOWN;
}
