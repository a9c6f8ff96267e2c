import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { AuditApiError, parseAuditApiConfig } from "../index.ts";

const KEY = "k".repeat(32);
const base = {
  SVC_AUDIT_PG_URL: "postgres://u:p@127.0.0.1:5432/db",
  SVC_AUDIT_API_PAGE_TOKEN_KEY: KEY,
  SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc",
};

test("defaults: gRPC on the spec's port 50052, page sizes and export limits", () => {
  const config = parseAuditApiConfig(base);
  expect(config.grpcPort).toBe(50_052);
  expect(config.schema).toBe("audit");
  expect(config.limits).toEqual({
    defaultPageSize: 100,
    maxPageSize: 1_000,
    maxExportEvents: 10_000,
    maxExportBytes: 4_000_000,
    rangeMergeBytes: 65_536,
  });
  expect(config.objectCacheBytes).toBe(64 * 1024 * 1024);
  expect(parseAuditApiConfig({ ...base, SVC_AUDIT_API_OBJECT_CACHE_BYTES: "0" }).objectCacheBytes).toBe(0);
  expect(config.auth.issuer).toBe(base.SVC_AUTH_ISSUER);
});

test("the freshness tail: off without SVC_AUDIT_KAFKA_BROKERS, else on the writer's topic", () => {
  expect(parseAuditApiConfig(base).tail).toBeUndefined();
  expect(parseAuditApiConfig({ ...base, SVC_AUDIT_KAFKA_BROKERS: "a:9092,b:9093" }).tail).toEqual({
    brokers: ["a:9092", "b:9093"],
    topic: "svc.audit.events.v1",
    maxRecords: 1_000_000,
    refreshMs: 500,
  });
});

test("the block cache's disk tier: off by default; a directory turns it on at 1 GiB unless sized", () => {
  expect(parseAuditApiConfig(base).diskCache).toBeUndefined();
  expect(parseAuditApiConfig({ ...base, SVC_AUDIT_API_DISK_CACHE_DIR: "/var/cache/blocks" }).diskCache).toEqual({
    dir: "/var/cache/blocks",
    maxBytes: 1024 * 1024 * 1024,
  });
  const sized = { ...base, SVC_AUDIT_API_DISK_CACHE_DIR: "/c", SVC_AUDIT_API_DISK_CACHE_BYTES: "2097152" };
  expect(parseAuditApiConfig(sized).diskCache?.maxBytes).toBe(2_097_152);
});

test("a disk tier without the memory cache in front of it is refused, naming SVC_AUDIT_API_DISK_CACHE_DIR", () => {
  const env = { ...base, SVC_AUDIT_API_DISK_CACHE_DIR: "/c", SVC_AUDIT_API_OBJECT_CACHE_BYTES: "0" };
  const error = thrownBy(() => parseAuditApiConfig(env), AuditApiError);
  expect(error.code).toBe("AUDIT_API_CONFIG_INVALID");
  expect(error.subject).toBe("SVC_AUDIT_API_DISK_CACHE_DIR");
});

test("SVC_AUDIT_HOST_PORT overrides the gRPC port", () => {
  expect(parseAuditApiConfig({ ...base, SVC_AUDIT_HOST_PORT: "6001" }).grpcPort).toBe(6001);
});

test.each([
  ["SVC_AUDIT_HOST_PORT", "70000"],
  ["SVC_AUDIT_GRPC_HOST", "http://0.0.0.0"],
  ["SVC_AUDIT_REST_HOST", "0.0.0.0/0"],
  ["SVC_AUDIT_HOST_PORT", "12ab"],
  ["SVC_AUDIT_PG_URL", "mysql://x"],
  ["SVC_AUDIT_INDEX_SCHEMA", "Bad-Name"],
  ["SVC_AUDIT_API_PAGE_TOKEN_KEY", "short"],
  ["SVC_AUDIT_API_MAX_PAGE_SIZE", "0"],
  ["SVC_AUDIT_S3_FORCE_PATH_STYLE", "yes"],
  ["SVC_AUDIT_KAFKA_BROKERS", "kafka"],
  ["SVC_AUDIT_TOPIC", "bad topic"],
  ["SVC_AUDIT_API_TAIL_MAX_RECORDS", "0"],
  ["SVC_AUDIT_API_TAIL_REFRESH_MS", "1"],
  ["SVC_AUDIT_API_OBJECT_CACHE_BYTES", "64MiB"],
  ["SVC_AUDIT_API_DISK_CACHE_BYTES", "1024"],
  ["SVC_AUDIT_API_DISK_CACHE_BYTES", "1GiB"],
  ["SVC_AUDIT_API_DISK_CACHE_BYTES", String(64 * 1024 ** 3 + 1)],
])("a bad %s (%s) is refused naming the variable", (name, value) => {
  const error = thrownBy(() => parseAuditApiConfig({ ...base, [name]: value }), AuditApiError);
  expect(error.code).toBe("AUDIT_API_CONFIG_INVALID");
  expect(error.subject).toBe(name);
  expect(error.message).toStartWith(`${name}:`);
});

test("the page-token key's value is never printed", () => {
  const error = thrownBy(
    () => parseAuditApiConfig({ ...base, SVC_AUDIT_API_PAGE_TOKEN_KEY: "secret-ish" }),
    AuditApiError,
  );
  expect(error.message).not.toContain("secret-ish");
});

test("missing required settings are named", () => {
  const { SVC_AUDIT_PG_URL: _, ...withoutPg } = base;
  expect(thrownBy(() => parseAuditApiConfig(withoutPg), AuditApiError).subject).toBe("SVC_AUDIT_PG_URL");
  const { SVC_AUDIT_API_PAGE_TOKEN_KEY: __, ...withoutKey } = base;
  expect(thrownBy(() => parseAuditApiConfig(withoutKey), AuditApiError).subject).toBe("SVC_AUDIT_API_PAGE_TOKEN_KEY");
});

test("a default page size above the maximum, and half of the S3 credentials, are refused", () => {
  const sizes = { ...base, SVC_AUDIT_API_DEFAULT_PAGE_SIZE: "500", SVC_AUDIT_API_MAX_PAGE_SIZE: "100" };
  expect(thrownBy(() => parseAuditApiConfig(sizes), AuditApiError).subject).toBe("SVC_AUDIT_API_DEFAULT_PAGE_SIZE");
  const half = { ...base, SVC_AUDIT_S3_ACCESS_KEY: "a" };
  expect(thrownBy(() => parseAuditApiConfig(half), AuditApiError).subject).toBe("SVC_AUDIT_S3_SECRET_KEY");
});

test("a bad auth setting fails the audit API's config, naming the SVC_AUTH_ variable", () => {
  const error = thrownBy(() => parseAuditApiConfig({ ...base, SVC_AUTH_DISABLED: "true" }), AuditApiError);
  expect(error.code).toBe("AUDIT_API_CONFIG_INVALID");
  expect(error.subject).toBe("SVC_AUTH_DISABLED_ACKNOWLEDGE");
});

test("main exits 2 printing the bad variable", async () => {
  const child = Bun.spawn(["bun", "run", `${import.meta.dir}/../src/main.ts`], {
    env: { PATH: process.env.PATH ?? "", ...base, SVC_AUDIT_HOST_PORT: "99999" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  expect(code).toBe(2);
  expect(stderr).toContain("SVC_AUDIT_HOST_PORT");
});
