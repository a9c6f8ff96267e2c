import { expect, test } from "bun:test";
import { type AuditRecord, AuditRecordError, encodeRecord } from "@svc/audit-record";
import { thrownBy } from "@svc/testkit";
import { encodeLine } from "../src/encode-line.ts";

const record: AuditRecord = {
  id: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
  time: "2026-11-23T11:00:00.123Z",
  source: "endpoint",
  action: "/test.Echo/unary",
  resource: "echo/a",
  result: "ok",
  duration_ms: 1.5,
  claimed_tenant_id: "tenant-a",
  principal_id: "principal-1",
  tenant_id: "tenant-a",
};

test("the compiled fast path gives exactly encodeRecord's line", () => {
  expect(encodeLine(record)).toBe(encodeRecord(record));
  expect(encodeLine({ ...record, attributes: { version: "3" } })).toBe(
    encodeRecord({ ...record, attributes: { version: "3" } }),
  );
});

test.each<[string, unknown, string]>([
  ["a bad time", { ...record, time: "yesterday" }, "/time"],
  ["an unknown field", { ...record, extra: "x" }, "/extra"],
  ["a negative duration", { ...record, duration_ms: -1 }, "/duration_ms"],
  ["a sensitive attribute name", { ...record, attributes: { password: "x" } }, "/attributes/password"],
])("%s is refused with @svc/audit-record's error naming the field", (_, value, subject) => {
  const error = thrownBy(() => encodeLine(value as AuditRecord), AuditRecordError);
  expect(error.subject).toBe(subject);
});
