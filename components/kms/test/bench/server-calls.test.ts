import { expect, test } from "bun:test";
import { checkServerCalls } from "../../bench/server-calls.ts";

const counts = (entries: Record<string, number>) => new Map(Object.entries(entries));
const BEFORE = counts({ OK: 100, PERMISSION_DENIED: 3 });

test("a row is valid when the KMS answered OK every call the client counted; calls cut at its end may remain", () => {
  const exact = checkServerCalls(BEFORE, counts({ OK: 1100, PERMISSION_DENIED: 3 }), 1000, 64);
  expect(exact).toEqual({ ok: 1000, other: "", valid: true });
  // h2load's end: 30 answered OK after it stopped counting, 34 closed before their message (grpc-js: UNIMPLEMENTED)
  const cut = checkServerCalls(BEFORE, counts({ OK: 1130, PERMISSION_DENIED: 3, UNIMPLEMENTED: 34 }), 1000, 64);
  expect(cut).toEqual({ ok: 1030, other: "UNIMPLEMENTED 34", valid: true });
});

test("fewer OK answers than counted successes, any refusal, or more cut calls than were in flight is invalid", () => {
  // h2load counts a refused call (HTTP 200, grpc-status in the trailers) as a success
  const refused = checkServerCalls(BEFORE, counts({ OK: 1000, PERMISSION_DENIED: 3, UNAUTHENTICATED: 100 }), 1000, 64);
  expect(refused).toEqual({ ok: 900, other: "UNAUTHENTICATED 100", valid: false });
  const fewer = checkServerCalls(BEFORE, counts({ OK: 1099, PERMISSION_DENIED: 3 }), 1000, 64);
  expect(fewer.valid).toBe(false);
  const oneRefusal = checkServerCalls(BEFORE, counts({ OK: 1100, PERMISSION_DENIED: 4 }), 1000, 64);
  expect(oneRefusal).toEqual({ ok: 1000, other: "PERMISSION_DENIED 1", valid: false });
  const tooManyCut = checkServerCalls(BEFORE, counts({ OK: 1100, CANCELLED: 65 }), 1000, 64);
  expect(tooManyCut.valid).toBe(false);
});
