import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
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

/** The refusal of `who` for `operation`; fails the test when `authorize` lets the caller through. */
const denied = (who: Caller, operation: Operation): AuthError => thrownBy(() => authorize(who, operation), AuthError);

test("a security token without audit:read may not list audit events", () => {
  const error = denied(caller(["security"], ["openid", "profile"]), "audit.list");
  expect(error?.code).toBe("AUTH_PERMISSION_DENIED");
  expect(error?.kind).toBe("permission-denied");
  expect(error?.message).toContain("audit:read");
});

test("a refusal carries the caller it refused (a missing role or a missing scope)", () => {
  const who = caller(["security"], ["openid"]);
  expect(denied(who, "audit.list").caller).toBe(who);
  expect(denied(who, "kms.keys.manage").caller).toBe(who);
});

test("security with audit:read may list; audit-only with audit:read may list", () => {
  expect(authorize(caller(["security"], ["audit:read"]), "audit.list")).toBeUndefined();
  expect(authorize(caller(["audit-only"], ["audit:read"]), "audit.list")).toBeUndefined();
});

test("audit-only may not export; audit-exporter with audit:export may", () => {
  expect(denied(caller(["audit-only"], ["audit:read", "audit:export"]), "audit.export").message).toContain(
    "security or audit-exporter",
  );
  expect(authorize(caller(["audit-exporter"], ["audit:export"]), "audit.export")).toBeUndefined();
  expect(denied(caller(["audit-exporter"], ["audit:read"]), "audit.export").code).toBe("AUTH_PERMISSION_DENIED");
});

test("app may not call admin.keys; ops may", () => {
  const error = denied(caller(["app"]), "admin.keys");
  expect(error?.code).toBe("AUTH_PERMISSION_DENIED");
  expect(error?.message).toContain("ops");
  expect(authorize(caller(["ops"]), "admin.keys")).toBeUndefined();
  expect(authorize(caller(["ops"]), "admin.indexes")).toBeUndefined();
});

test("admin.services needs security; endpoint.grpc needs app; endpoint.topk takes topk or app", () => {
  expect(denied(caller(["ops"]), "admin.services").code).toBe("AUTH_PERMISSION_DENIED");
  expect(authorize(caller(["security"]), "admin.services")).toBeUndefined();
  expect(denied(caller(["topk"]), "endpoint.grpc").code).toBe("AUTH_PERMISSION_DENIED");
  expect(authorize(caller(["app"]), "endpoint.grpc")).toBeUndefined();
  expect(authorize(caller(["topk"]), "endpoint.topk")).toBeUndefined();
  expect(authorize(caller(["app"]), "endpoint.topk")).toBeUndefined();
});

test("kms: keymanager manages keys and reads public keys; pubkey-reader only reads", () => {
  expect(authorize(caller(["keymanager"]), "kms.keys.manage")).toBeUndefined();
  expect(authorize(caller(["keymanager"]), "kms.pubkey.read")).toBeUndefined();
  expect(authorize(caller(["pubkey-reader"]), "kms.pubkey.read")).toBeUndefined();
  expect(denied(caller(["pubkey-reader"]), "kms.keys.manage").code).toBe("AUTH_PERMISSION_DENIED");
});

test("kms key use: app and keymanager; not pubkey-reader; app may not manage keys", () => {
  expect(authorize(caller(["app"]), "kms.keys.use")).toBeUndefined();
  expect(authorize(caller(["keymanager"]), "kms.keys.use")).toBeUndefined();
  expect(denied(caller(["pubkey-reader"]), "kms.keys.use").message).toContain("app or keymanager");
  expect(denied(caller(["app"]), "kms.keys.manage").code).toBe("AUTH_PERMISSION_DENIED");
  expect(denied(caller(["app"]), "kms.pubkey.read").code).toBe("AUTH_PERMISSION_DENIED");
});

test("a caller without roles is denied everything; the anonymous caller (auth disabled) is allowed", () => {
  for (const operation of OPERATIONS) {
    expect(denied(caller([]), operation).code).toBe("AUTH_PERMISSION_DENIED");
    expect(authorize(anonymousCaller("t"), operation)).toBeUndefined();
  }
});

test("an operation name not in the table is denied", () => {
  expect(isOperation("admin.keys")).toBe(true);
  expect(isOperation("toString")).toBe(false);
  expect(denied(caller(["ops"]), "admin.nope" as Operation).code).toBe("AUTH_PERMISSION_DENIED");
});

test("component.rpc: only the component role (the svc-components service account); no user role reaches it", () => {
  expect(authorize(caller(["component"]), "component.rpc")).toBeUndefined();
  for (const role of [
    "app",
    "ops",
    "security",
    "keymanager",
    "topk",
    "pubkey-reader",
    "audit-only",
    "audit-exporter",
  ]) {
    expect(denied(caller([role]), "component.rpc").message).toContain("requires role component");
  }
  expect(denied(caller(["component"]), "endpoint.grpc").code).toBe("AUTH_PERMISSION_DENIED");
});
