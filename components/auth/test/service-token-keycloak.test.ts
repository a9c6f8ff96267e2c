/**
 * Against the REAL Keycloak of the stack (a realm of its own, seeded as `ops/dev up` seeds `svc`, deleted after):
 * the components' client `svc-components` gets tokens the core accepts for `component.rpc`, a user's token does not
 * pass, a wrong secret is AUTH_SERVICE_CREDENTIALS_REJECTED, renewal happens before expiry, and the interceptor
 * carries the token end to end over grpc-js.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { status } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import { rejectionOf, type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";
import { decodeJwt } from "jose";
import {
  type AuthCore,
  AuthError,
  createAuthCore,
  parseAuthConfig,
  parseServiceCredentials,
  serviceTokenInterceptor,
} from "../index.ts";
import { componentServiceHarness, unary } from "./support/component-service.ts";
import { stopUnreachableIssuers, unreachableIssuer } from "./support/stand-in-token-idp.ts";
import { captureLogger } from "./support/test-issuer.ts";
import { serviceTokenSources } from "./support/token-sources.ts";

let realm: SeededRealm;
let core: AuthCore;
let address: string;
const harness = componentServiceHarness();
const sources = serviceTokenSources({ clientId: "svc-components" });
const source = (clientSecret: string, issuer = realm.issuer) => sources.open({ issuer, clientSecret });

beforeAll(async () => {
  realm = await seedTestRealm("svc-token");
  core = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: realm.issuer }), ...captureLogger() });
  await core.start();
  address = await harness.serve(core);
}, 60_000);

afterAll(async () => {
  stopUnreachableIssuers();
  sources.closeAll();
  harness.close();
  await realm?.remove();
});

test("the seeded client's token passes a real core for component.rpc: principal svc-components, tenant svc-internal", async () => {
  const env = { SVC_AUTH_CLIENT_SECRET: realm.componentsClientSecret };
  const credentials = parseServiceCredentials(env, core.config);
  expect(credentials?.clientId).toBe("svc-components");
  const { source: s, log } = source(credentials?.clientSecret ?? "");
  await s.start();
  const { accessToken, tenantId } = await s.token();
  expect(tenantId).toBe("svc-internal");
  const caller = await core.check({ authorization: `Bearer ${accessToken}`, tenantId }, "component.rpc");
  expect(caller.principalId).toBe("svc-components");
  expect(caller.tenantId).toBe("svc-internal");
  expect(caller.roles).toContain("component");
  expect(log()).not.toContain(realm.componentsClientSecret);
});

test("an application user's token is refused for component.rpc (AUTH_PERMISSION_DENIED)", async () => {
  const { url, realm: name, clientId, userPassword, tenantId } = realm.seed;
  const set = await issueToken({ url, realm: name, clientId }, { user: "app", password: userPassword });
  const request = { authorization: `Bearer ${set.access_token}`, tenantId };
  const error = await rejectionOf(core.check(request, "component.rpc"), AuthError);
  expect(error.code).toBe("AUTH_PERMISSION_DENIED");
});

test("a wrong secret → AUTH_SERVICE_CREDENTIALS_REJECTED (not retryable), the secret not in message or log", async () => {
  const { source: s, log } = source("not-the-secret-xyz");
  const error = await rejectionOf(s.start(), AuthError);
  expect(error.code).toBe("AUTH_SERVICE_CREDENTIALS_REJECTED");
  expect(error.canRetry).toBe(false);
  expect(error.message).toContain("SVC_AUTH_CLIENT_SECRET");
  expect(error.message).not.toContain("not-the-secret-xyz");
  expect(log()).not.toContain("not-the-secret-xyz");
});

test("interceptor end to end: answered with it, UNAUTHENTICATED without, UNAVAILABLE when the IdP is unreachable", async () => {
  const { source: s } = source(realm.componentsClientSecret);
  const answered = await unary(harness.client(address, [serviceTokenInterceptor(s)]));
  expect(answered.error).toBeNull();
  expect(answered.response).toEqual({ ok: true, principal: "svc-components" });
  expect(harness.seen.at(-1)).toMatchObject({ tenantId: "svc-internal", roles: expect.arrayContaining(["component"]) });

  const bare = await unary(harness.client(address, []));
  expect(bare.error?.code).toBe(status.UNAUTHENTICATED);

  const { source: down } = source(realm.componentsClientSecret, unreachableIssuer());
  const unavailable = await unary(harness.client(address, [serviceTokenInterceptor(down)]));
  expect(unavailable.error?.code).toBe(status.UNAVAILABLE);
  expect(unavailable.error?.details).toContain("AUTH_IDP_UNAVAILABLE");
});

test("renewal: with an 8 s token lifespan a new token arrives before the first one expires", async () => {
  // last in the file: the client's token lifespan stays short afterwards
  const [client] = await realm.admin.getList<{ id: string; attributes?: Record<string, string> }>(
    `/${realm.seed.realm}/clients?clientId=svc-components`,
  );
  if (!client) throw new Error("svc-components not seeded");
  const full = await realm.admin.get<Record<string, unknown>>(`/${realm.seed.realm}/clients/${client.id}`);
  await realm.admin.put(`/${realm.seed.realm}/clients/${client.id}`, {
    ...full,
    attributes: { ...(full?.attributes as Record<string, string>), "access.token.lifespan": "8" },
  });
  const { source: s } = source(realm.componentsClientSecret);
  await s.start();
  const first = await s.token();
  const firstExpiresAtMs = (decodeJwt(first.accessToken).exp ?? 0) * 1000;
  expect(firstExpiresAtMs - Date.now()).toBeLessThanOrEqual(8_000);
  const renewed = await waitFor(
    "a renewed token",
    async () => {
      const current = await s.token();
      return current.accessToken !== first.accessToken ? current : undefined;
    },
    { timeoutMs: 12_000, intervalMs: 100 },
  );
  expect(Date.now()).toBeLessThan(firstExpiresAtMs);
  const caller = await core.check(
    { authorization: `Bearer ${renewed.accessToken}`, tenantId: renewed.tenantId },
    "component.rpc",
  );
  expect(caller.principalId).toBe("svc-components");
}, 30_000);
