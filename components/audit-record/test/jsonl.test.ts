import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import {
  type AuditRecord,
  AuditRecordError,
  encodeRecord,
  isSensitiveAttribute,
  parseRecordLine,
  parseRecords,
} from "../index.ts";

const record: AuditRecord = {
  id: "0192f1c4-7d2e-7b3a-9c1d-2f4e5a6b7c8d",
  time: "2026-11-21T19:40:00.123Z",
  source: "endpoint",
  action: "/audit.v2.AuditService/list_events",
  resource: "audit/events",
  result: "ok",
  duration_ms: 12.5,
  claimed_tenant_id: "tenant-a",
  principal_id: "svc-security",
  tenant_id: "tenant-a",
};

const errorOf = (run: () => unknown) => thrownBy(run, AuditRecordError);

test("a record encodes to one newline-terminated JSON line and parses back equal", () => {
  const line = encodeRecord(record);
  expect(line.endsWith("\n")).toBe(true);
  expect(line.slice(0, -1)).not.toContain("\n");
  expect(parseRecordLine(line.trimEnd())).toEqual(record);
});

test("the line is the record's JSON as given, with attributes or without", () => {
  expect(encodeRecord(record)).toBe(`${JSON.stringify(record)}\n`);
  const withAttributes = { ...record, attributes: { version: "3" } };
  expect(encodeRecord(withAttributes)).toBe(`${JSON.stringify(withAttributes)}\n`);
});

test.each<[string, unknown, string]>([
  ["a bad time", { ...record, time: "yesterday" }, "/time"],
  ["an unknown field", { ...record, extra: "x" }, "/extra"],
  ["a negative duration", { ...record, duration_ms: -1 }, "/duration_ms"],
  ["a sensitive attribute name", { ...record, attributes: { password: "x" } }, "/attributes/password"],
])("encoding %s is refused with the error naming the field", (_, value, subject) => {
  expect(errorOf(() => encodeRecord(value as AuditRecord)).subject).toBe(subject);
});

test("JSONL content parses line by line, skipping blank lines", () => {
  const second = { ...record, id: "second", result: "PERMISSION_DENIED" };
  const content = `${encodeRecord(record)}\n${encodeRecord(second)}`;
  expect(parseRecords(content).map((r) => r.id)).toEqual([record.id, "second"]);
});

test("a line that is not JSON is AUDIT_RECORD_MALFORMED_JSON with its line number", () => {
  const error = errorOf(() => parseRecords(`${encodeRecord(record)}{"action":`));
  expect(error.code).toBe("AUDIT_RECORD_MALFORMED_JSON");
  expect(error.line).toBe(2);
});

test.each([
  ["/duration_ms", { ...record, duration_ms: -1 }],
  ["/time", { ...record, time: "yesterday" }],
  ["/action", { ...record, action: "" }],
  ["/unknown_field", { ...record, unknown_field: 1 }],
])("an invalid record names the field %s", (field, bad) => {
  const error = errorOf(() => parseRecordLine(JSON.stringify(bad)));
  expect(error.code).toBe("AUDIT_RECORD_INVALID");
  expect(error.subject).toBe(field);
});

test("a missing required field is refused", () => {
  const { result: _result, ...withoutResult } = record;
  expect(errorOf(() => parseRecordLine(JSON.stringify(withoutResult))).code).toBe("AUDIT_RECORD_INVALID");
});

test.each([
  "passphrase",
  "api_token",
  "private_key",
  "privateKey",
  "face_template",
  "key-material",
  "db.password",
  "pwd",
  "APIKey",
  "apikey",
  "clientsecret",
  "client_secrets",
  "PRIVKEY",
  "refreshtoken",
  "Authorization",
  "set-cookie",
])("an attribute named %s is refused as sensitive, and nothing is encoded", (name) => {
  const error = errorOf(() => encodeRecord({ ...record, attributes: { [name]: "x" } }));
  expect(error.code).toBe("AUDIT_RECORD_SENSITIVE_FIELD");
  expect(error.subject).toBe(`/attributes/${name}`);
});

test("ordinary attributes are kept", () => {
  const withAttributes = { ...record, attributes: { grpc_status: "OK", peer: "10.0.0.7" } };
  expect(parseRecordLine(encodeRecord(withAttributes).trimEnd()).attributes).toEqual(withAttributes.attributes);
});

test.each([
  "interface",
  "surface",
  "bypass",
  "compass",
  "max_tokens",
  "keyspace",
  "public_key_id",
  "grpc_status",
  "key_id",
  "HTTPStatus",
  "secretary",
])("an ordinary attribute named %s is not mistaken for a secret", (name) => {
  expect(isSensitiveAttribute(name)).toBe(false);
  expect(parseRecordLine(encodeRecord({ ...record, attributes: { [name]: "v" } }).trimEnd()).attributes).toEqual({
    [name]: "v",
  });
});
