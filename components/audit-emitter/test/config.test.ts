import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { AuditEmitterError, EMITTER_DEFAULTS, loadEmitterConfig } from "../index.ts";

test("defaults: stdout, fail-open, 16 MiB buffer, 64 KiB records, no fsync, source from the component", () => {
  expect(loadEmitterConfig({}, { source: "endpoint" })).toEqual({
    source: "endpoint",
    sink: "stdout",
    file: undefined,
    failMode: "open",
    maxBufferedBytes: EMITTER_DEFAULTS.maxBufferedBytes,
    maxRecordBytes: 65_536,
    fsync: false,
  });
});

test("every variable set", () => {
  expect(
    loadEmitterConfig(
      {
        SVC_AUDIT_SOURCE: "kms",
        SVC_AUDIT_LOG_SINK: "file",
        SVC_AUDIT_LOG_FILE: "/var/log/svc/audit.jsonl",
        SVC_AUDIT_FAIL_MODE: "closed",
        SVC_AUDIT_LOG_MAX_BUFFER_BYTES: "65536",
        SVC_AUDIT_LOG_MAX_RECORD_BYTES: "32768",
        SVC_AUDIT_LOG_FSYNC: "true",
        SVC_AUDIT_LOG_ROTATE_BYTES: "104857600",
        SVC_AUDIT_LOG_ROTATE_KEEP: "4",
      },
      { source: "endpoint" },
    ),
  ).toEqual({
    source: "kms",
    sink: "file",
    file: "/var/log/svc/audit.jsonl",
    rotate: { bytes: 104_857_600, keep: 4 },
    failMode: "closed",
    maxBufferedBytes: 65536,
    maxRecordBytes: 32768,
    fsync: true,
  });
});

const FILE = { SVC_AUDIT_LOG_SINK: "file", SVC_AUDIT_LOG_FILE: "/var/log/svc/audit.jsonl" };

test("size rotation is off unless a size is set; 0 is off; the default keeps 5 generations", () => {
  expect(loadEmitterConfig(FILE, { source: "endpoint" }).rotate).toBeUndefined();
  expect(
    loadEmitterConfig({ ...FILE, SVC_AUDIT_LOG_ROTATE_BYTES: "0" }, { source: "endpoint" }).rotate,
  ).toBeUndefined();
  expect(loadEmitterConfig({ ...FILE, SVC_AUDIT_LOG_ROTATE_BYTES: "1048576" }, { source: "endpoint" }).rotate).toEqual({
    bytes: 1_048_576,
    keep: 5,
  });
});

test.each<[string, Record<string, string>]>([
  ["SVC_AUDIT_SOURCE", { SVC_AUDIT_SOURCE: "Endpoint!" }],
  ["SVC_AUDIT_SOURCE", { SVC_AUDIT_SOURCE: "a".repeat(65) }],
  ["SVC_AUDIT_LOG_SINK", { SVC_AUDIT_LOG_SINK: "syslog" }],
  ["SVC_AUDIT_LOG_FILE", { SVC_AUDIT_LOG_SINK: "file" }],
  ["SVC_AUDIT_LOG_FILE", { SVC_AUDIT_LOG_SINK: "file", SVC_AUDIT_LOG_FILE: "relative/audit.jsonl" }],
  ["SVC_AUDIT_LOG_FILE", { SVC_AUDIT_LOG_SINK: "file", SVC_AUDIT_LOG_FILE: "/var/log/svc/" }],
  ["SVC_AUDIT_LOG_FILE", { SVC_AUDIT_LOG_SINK: "file", SVC_AUDIT_LOG_FILE: "   " }],
  ["SVC_AUDIT_LOG_FILE", { SVC_AUDIT_LOG_FILE: "/var/log/svc/audit.jsonl" }],
  ["SVC_AUDIT_FAIL_MODE", { SVC_AUDIT_FAIL_MODE: "closed-ish" }],
  ["SVC_AUDIT_LOG_MAX_BUFFER_BYTES", { SVC_AUDIT_LOG_MAX_BUFFER_BYTES: "1024" }],
  ["SVC_AUDIT_LOG_MAX_BUFFER_BYTES", { SVC_AUDIT_LOG_MAX_BUFFER_BYTES: "16MiB" }],
  ["SVC_AUDIT_LOG_MAX_BUFFER_BYTES", { SVC_AUDIT_LOG_MAX_BUFFER_BYTES: "2147483648" }],
  ["SVC_AUDIT_LOG_MAX_BUFFER_BYTES", { SVC_AUDIT_LOG_MAX_BUFFER_BYTES: "-1" }],
  ["SVC_AUDIT_LOG_MAX_RECORD_BYTES", { SVC_AUDIT_LOG_MAX_RECORD_BYTES: "16383" }],
  ["SVC_AUDIT_LOG_MAX_RECORD_BYTES", { SVC_AUDIT_LOG_MAX_RECORD_BYTES: "1048577" }],
  ["SVC_AUDIT_LOG_MAX_RECORD_BYTES", { SVC_AUDIT_LOG_MAX_RECORD_BYTES: "64KiB" }],
  // one record must fit in the buffer
  [
    "SVC_AUDIT_LOG_MAX_RECORD_BYTES",
    { SVC_AUDIT_LOG_MAX_BUFFER_BYTES: "65536", SVC_AUDIT_LOG_MAX_RECORD_BYTES: "65537" },
  ],
  ["SVC_AUDIT_LOG_FSYNC", { SVC_AUDIT_LOG_FSYNC: "yes" }],
  ["SVC_AUDIT_LOG_ROTATE_BYTES", { ...FILE, SVC_AUDIT_LOG_ROTATE_BYTES: "65536" }],
  ["SVC_AUDIT_LOG_ROTATE_BYTES", { ...FILE, SVC_AUDIT_LOG_ROTATE_BYTES: "100MiB" }],
  ["SVC_AUDIT_LOG_ROTATE_BYTES", { SVC_AUDIT_LOG_ROTATE_BYTES: "104857600" }], // stdout cannot rotate
  ["SVC_AUDIT_LOG_ROTATE_KEEP", { ...FILE, SVC_AUDIT_LOG_ROTATE_BYTES: "104857600", SVC_AUDIT_LOG_ROTATE_KEEP: "0" }],
  ["SVC_AUDIT_LOG_ROTATE_KEEP", { ...FILE, SVC_AUDIT_LOG_ROTATE_KEEP: "3" }], // keep without a size
])("a bad %s is refused, naming the variable (%p)", (name, env) => {
  const error = thrownBy(() => loadEmitterConfig(env, { source: "endpoint" }), AuditEmitterError);
  expect(error.code).toBe("AUDIT_EMITTER_CONFIG_INVALID");
  expect(error.subject).toBe(name);
  expect(error.message).toStartWith(`${name}: `);
});

test("blank values count as unset; values are trimmed", () => {
  expect(
    loadEmitterConfig(
      { SVC_AUDIT_LOG_SINK: " ", SVC_AUDIT_FAIL_MODE: " closed ", SVC_AUDIT_SOURCE: "" },
      { source: "kms" },
    ),
  ).toMatchObject({ source: "kms", sink: "stdout", failMode: "closed" });
});

test("a component default that is not a name is refused on SVC_AUDIT_SOURCE", () => {
  const error = thrownBy(() => loadEmitterConfig({}, { source: "Bad Name" }), AuditEmitterError);
  expect(error.subject).toBe("SVC_AUDIT_SOURCE");
});
