import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { AuditRecordSchema } from "@svc/audit-record";
import { surelyValidRecord } from "../src/fast-record-check.ts";
import { auditRecord } from "./support/records.ts";

const base = () => ({ ...auditRecord("fast-1"), attributes: { note: "n" } }) as Record<string, unknown>;
const long = (n: number) => "x".repeat(n);

describe("surelyValidRecord never accepts what the schema refuses", () => {
  const cases: [string, unknown][] = [
    ["valid", base()],
    ["valid without attributes", { ...base(), attributes: undefined }],
    ["null", null],
    ["array", [base()]],
    ["string", "x"],
    ["extra field", { ...base(), extra: 1 }],
    ["extra field replacing attributes", { ...base(), attributes: undefined, extra: "x" }],
    ["missing id", { ...base(), id: undefined }],
    ["empty id", { ...base(), id: "" }],
    ["long id", { ...base(), id: long(129) }],
    ["numeric id", { ...base(), id: 5 }],
    ["bad time", { ...base(), time: "2026-11-23 10:00:00" }],
    ["impossible time", { ...base(), time: "2026-13-45T10:00:00Z" }],
    ["valid offset time", { ...base(), time: "2026-11-23T10:00:00.5+02:00" }],
    ["empty source", { ...base(), source: "" }],
    ["long action", { ...base(), action: long(257) }],
    ["long resource", { ...base(), resource: long(1025) }],
    ["empty result", { ...base(), result: "" }],
    ["negative duration", { ...base(), duration_ms: -1 }],
    ["string duration", { ...base(), duration_ms: "1" }],
    ["long tenant", { ...base(), tenant_id: long(257) }],
    ["null principal", { ...base(), principal_id: null }],
    ["attributes array", { ...base(), attributes: ["a"] }],
    ["attribute number", { ...base(), attributes: { a: 1 } }],
    ["attribute too long", { ...base(), attributes: { a: long(4097) } }],
    ["attribute key with newline", { ...base(), attributes: { "a\nb": "x" } }],
    ["proto key", JSON.parse(`{"__proto__":1,${JSON.stringify(base()).slice(1)}`)],
  ];
  for (const [name, value] of cases) {
    test(name, () => {
      const clean = value && typeof value === "object" ? JSON.parse(JSON.stringify(value)) : value;
      const fast = surelyValidRecord(clean);
      if (fast) expect(Value.Check(AuditRecordSchema, clean)).toBe(true);
      if (name.startsWith("valid")) expect(fast).toBe(true);
      else expect(fast).toBe(false);
    });
  }
});
