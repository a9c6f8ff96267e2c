import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { AuthError, bearerToken, MAX_BEARER_TOKEN_LENGTH, tenantHeader } from "../index.ts";

const codeOf = (run: () => unknown) => {
  const error = thrownBy(run, AuthError);
  return [error.code, error.subject];
};

test("tenantHeader: the one value exactly as received; absent or empty → AUTH_TENANT_HEADER_MISSING", () => {
  expect(tenantHeader("tenant-a")).toBe("tenant-a");
  expect(tenantHeader(["tenant-a"])).toBe("tenant-a");
  expect(tenantHeader("Tenant_A.9:x-y/z@w")).toBe("Tenant_A.9:x-y/z@w");
  for (const value of [undefined, null, "", []]) {
    expect(codeOf(() => tenantHeader(value))).toEqual(["AUTH_TENANT_HEADER_MISSING", "x-tenant-id"]);
  }
});

test("tenantHeader: repeated, comma-joined, whitespace, control or invisible characters → AUTH_TENANT_HEADER_INVALID", () => {
  const spaces = [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2007, 0x200a, 0x2028, 0x2029]
    .concat([0x202f, 0x205f, 0x3000, 0xfeff, 0x200b, 0x200d, 0x2060, 0x00, 0x1f, 0x7f, 0x9f])
    .map((code) => String.fromCodePoint(code));
  for (const ch of spaces) {
    for (const value of [`tenant-a${ch}`, `${ch}tenant-a`, `ten${ch}ant-a`, ch]) {
      expect(codeOf(() => tenantHeader(value))).toEqual(["AUTH_TENANT_HEADER_INVALID", "x-tenant-id"]);
    }
  }
  for (const value of [["tenant-a", "tenant-a"], ["", "tenant-a"], "tenant-a, tenant-a", "tenant-a,tenant-b"]) {
    expect(codeOf(() => tenantHeader(value))).toEqual(["AUTH_TENANT_HEADER_INVALID", "x-tenant-id"]);
  }
});

test("bearerToken: one value only; a list of two or a comma-joined pair → AUTH_TOKEN_MALFORMED naming authorization", () => {
  expect(bearerToken(["Bearer abc.def.ghi"])).toBe("abc.def.ghi");
  expect(codeOf(() => bearerToken([]))).toEqual(["AUTH_TOKEN_MISSING", "authorization"]);
  for (const value of [["Bearer a.b.c", "Bearer a.b.c"], "Bearer a.b.c, Bearer a.b.c", "Bearer a.b.c,Bearer d.e.f"]) {
    expect(codeOf(() => bearerToken(value))).toEqual(["AUTH_TOKEN_MALFORMED", "authorization"]);
  }
});

test("bearerToken: the size limit is checked first, on the raw value, whatever follows", () => {
  const token = "a".repeat(MAX_BEARER_TOKEN_LENGTH);
  expect(bearerToken(`Bearer ${token}`)).toBe(token);
  expect(codeOf(() => bearerToken(`Bearer ${token}a`))).toEqual(["AUTH_TOKEN_TOO_LARGE", "authorization"]);
  // a huge value that is also malformed / repeated is still refused for its size, before it is parsed
  expect(codeOf(() => bearerToken(`Basic ${"x".repeat(2 * MAX_BEARER_TOKEN_LENGTH)}`))).toEqual([
    "AUTH_TOKEN_TOO_LARGE",
    "authorization",
  ]);
  const huge = `Bearer ${"x".repeat(2 * MAX_BEARER_TOKEN_LENGTH)}`;
  expect(codeOf(() => bearerToken(["Bearer x", huge]))).toEqual(["AUTH_TOKEN_TOO_LARGE", "authorization"]);
});
