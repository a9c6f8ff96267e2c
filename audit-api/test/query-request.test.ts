import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { AuditApiError, normaliseRfc3339, parseExportRequest, parseListRequest, wholeMinutes } from "../index.ts";

const limits = {
  defaultPageSize: 100,
  maxPageSize: 1000,
  maxExportEvents: 10,
  maxExportBytes: 4096,
  rangeMergeBytes: 0,
};
const range = { start_time: "2026-01-01T00:00:00Z", end_time: "2026-01-02T00:00:00Z" };

function refusal(fields: Record<string, unknown>): AuditApiError {
  return thrownBy(() => parseListRequest(fields, limits), AuditApiError);
}

test("an offset time is normalised to UTC, the fraction kept", () => {
  expect(normaliseRfc3339("start_time", "2026-05-01T09:30:00+09:00")).toBe("2026-05-01T00:30:00Z");
  expect(normaliseRfc3339("start_time", "2026-01-01T00:10:00.123456-01:30")).toBe("2026-01-01T01:40:00.123456Z");
  expect(normaliseRfc3339("start_time", "2026-03-01t00:00:00z")).toBe("2026-03-01T00:00:00Z");
});

test.each([
  ["not a time", "not-a-time"],
  ["a date only", "2026-01-01"],
  ["no offset", "2026-01-01T00:00:00"],
  ["Feb 30", "2026-02-30T00:00:00Z"],
  ["hour 24", "2026-01-01T24:00:00Z"],
  ["a leap second", "2026-12-31T23:59:60Z"],
  ["a bad offset", "2026-01-01T00:00:00+25:00"],
  ["a number", 1_700_000_000],
  ["empty", ""],
])("start_time %s is refused naming the field", (_what, value) => {
  const error = refusal({ ...range, start_time: value });
  expect(error.code).toBe("AUDIT_API_INVALID_ARGUMENT");
  expect(error.subject).toBe("start_time");
  expect(error.message).toStartWith("start_time:");
});

test("end_time before start_time is refused naming end_time; equal times are an empty range", () => {
  expect(refusal({ start_time: range.end_time, end_time: range.start_time }).subject).toBe("end_time");
  expect(refusal({ ...range, end_time: "2026-01-01T08:59:59+09:00" }).subject).toBe("end_time");
  expect(parseListRequest({ ...range, end_time: range.start_time }, limits).query.end).toBe(range.start_time);
  expect(refusal({ start_time: range.start_time }).subject).toBe("end_time");
});

test.each([0, -1, 1001, 2.5, "10"])("page_size %p is refused naming the field", (size) => {
  const error = refusal({ ...range, page_size: size });
  expect(error.subject).toBe("page_size");
});

test("page_size defaults, and 1..max pass", () => {
  expect(parseListRequest(range, limits).pageSize).toBe(100);
  expect(parseListRequest({ ...range, page_size: 1 }, limits).pageSize).toBe(1);
  expect(parseListRequest({ ...range, page_size: 1000 }, limits).pageSize).toBe(1000);
});

test("filters are kept; a wrong type, an unknown field, a huge token are refused by name", () => {
  const parsed = parseListRequest(
    { ...range, principal_id: "", action: "a", result: "OK", resource_prefix: "idx/" },
    limits,
  );
  expect(parsed.query).toMatchObject({ principalId: "", action: "a", result: "OK", resourcePrefix: "idx/" });
  expect(refusal({ ...range, action: 5 }).subject).toBe("action");
  expect(refusal({ ...range, tenant_id: "x" }).subject).toBe("tenant_id");
  expect(refusal({ ...range, page_token: "x".repeat(2000) }).subject).toBe("page_token");
  expect(refusal({ ...range, page_token: 7 }).subject).toBe("page_token");
});

test("export: JSON (or unspecified) only", () => {
  expect(parseExportRequest({ ...range, format: "EXPORT_FORMAT_JSON" }).start).toBe(range.start_time);
  expect(parseExportRequest({ ...range, format: 0 }).end).toBe(range.end_time);
  expect(thrownBy(() => parseExportRequest({ ...range, format: 2 }), AuditApiError).subject).toBe("format");
  expect(thrownBy(() => parseExportRequest({ ...range, page_size: 2 }), AuditApiError).subject).toBe("page_size");
});

test("whole minutes of a range", () => {
  expect(wholeMinutes("2026-01-01T00:00:00Z", "2026-01-01T00:05:30Z")).toEqual({
    from: "2026-01-01T00:00:00Z",
    to: "2026-01-01T00:05:00Z",
  });
  expect(wholeMinutes("2026-01-01T00:00:00.000001Z", "2026-01-01T00:05:00Z").from).toBe("2026-01-01T00:01:00Z");
  expect(wholeMinutes("2026-01-01T23:59:30Z", "2026-01-02T00:00:10Z")).toEqual({
    from: "2026-01-02T00:00:00Z",
    to: "2026-01-02T00:00:00Z",
  });
});
