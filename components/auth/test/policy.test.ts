import { expect, test } from "bun:test";
import {
  AuthError,
  anonymousCaller,
  authorize,
  type Caller,
  isOperation,
  OPERATIONS,
  type Operation,
} from "../index.ts";

function caller(roles: string[], scopes: string[] = []): Caller {
  return {
    kind: "token",
    principalId: "p",
    tenantId: "t",
    roles,
    scopes,
    subject: "s",
    tokenExpiresAt: new Date(Date.now() + 60_000),
  };
}

function denial(who: Caller, operation: Operation): AuthError | undefined {
  try {
    authorize(who, operation);
    return undefined;
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
}

test("a security token without audit:read may not list audit events", () => {
  const error = denial(caller(["security"], ["openid", "profile"]), "audit.list");
  expect(error?.code).toBe("AUTH_PERMISSION_DENIED");
  expect(error?.kind).toBe("permission-denied");
  expect(error?.message).toContain("audit:read");
});

test("security with audit:read may list; audit-only with audit:read may list", () => {
  expect(denial(caller(["security"], ["audit:read"]), "audit.list")).toBeUndefined();
  expect(denial(caller(["audit-only"], ["audit:read"]), "audit.list")).toBeUndefined();
});

test("audit-only may not export; audit-exporter with audit:export may", () => {
  expect(denial(caller(["audit-only"], ["audit:read", "audit:export"]), "audit.export")?.message).toContain(
    "security or audit-exporter",
  );
  expect(denial(caller(["audit-exporter"], ["audit:export"]), "audit.export")).toBeUndefined();
  expect(denial(caller(["audit-exporter"], ["audit:read"]), "audit.export")?.code).toBe("AUTH_PERMISSION_DENIED");
});

test("app may not call admin.keys; ops may", () => {
  const error = denial(caller(["app"]), "admin.keys");
  expect(error?.code).toBe("AUTH_PERMISSION_DENIED");
  expect(error?.message).toContain("ops");
  expect(denial(caller(["ops"]), "admin.keys")).toBeUndefined();
  expect(denial(caller(["ops"]), "admin.indexes")).toBeUndefined();
});

test("admin.services needs security; endpoint.grpc needs app; endpoint.topk takes topk or app", () => {
  expect(denial(caller(["ops"]), "admin.services")?.code).toBe("AUTH_PERMISSION_DENIED");
  expect(denial(caller(["security"]), "admin.services")).toBeUndefined();
  expect(denial(caller(["topk"]), "endpoint.grpc")?.code).toBe("AUTH_PERMISSION_DENIED");
  expect(denial(caller(["app"]), "endpoint.grpc")).toBeUndefined();
  expect(denial(caller(["topk"]), "endpoint.topk")).toBeUndefined();
  expect(denial(caller(["app"]), "endpoint.topk")).toBeUndefined();
});

test("kms: keymanager manages keys and reads public keys; pubkey-reader only reads", () => {
  expect(denial(caller(["keymanager"]), "kms.keys.manage")).toBeUndefined();
  expect(denial(caller(["keymanager"]), "kms.pubkey.read")).toBeUndefined();
  expect(denial(caller(["pubkey-reader"]), "kms.pubkey.read")).toBeUndefined();
  expect(denial(caller(["pubkey-reader"]), "kms.keys.manage")?.code).toBe("AUTH_PERMISSION_DENIED");
});

test("a caller without roles is denied everything; the anonymous caller (auth disabled) is allowed", () => {
  for (const operation of OPERATIONS) {
    expect(denial(caller([]), operation)?.code).toBe("AUTH_PERMISSION_DENIED");
    expect(denial(anonymousCaller("t"), operation)).toBeUndefined();
  }
});

test("an operation name not in the table is denied", () => {
  expect(isOperation("admin.keys")).toBe(true);
  expect(isOperation("toString")).toBe(false);
  expect(denial(caller(["ops"]), "admin.nope" as Operation)?.code).toBe("AUTH_PERMISSION_DENIED");
});
