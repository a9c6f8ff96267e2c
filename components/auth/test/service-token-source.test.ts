/**
 * The service token source against an IdP stand-in whose token endpoint the test switches (outages, refusals and
 * broken answers on demand). Against the stack's real Keycloak: service-token-keycloak.test.ts.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { waitFor } from "@svc/common";
import { rejectionOf } from "@svc/testkit";
import { AuthConfigError, AuthError, createAuthCore } from "../index.ts";
import {
  type StandInTokenIdp,
  startStandInTokenIdp,
  stopUnreachableIssuers,
  unreachableIssuer,
} from "./support/stand-in-token-idp.ts";
import { captureLogger, startTestIssuer, testConfig } from "./support/test-issuer.ts";
import { serviceTokenSources } from "./support/token-sources.ts";

const credentials = { clientId: "svc-components", clientSecret: "stand-in-secret-value" };
const sources = serviceTokenSources(credentials);

let idp: StandInTokenIdp;
beforeAll(async () => {
  idp = await startStandInTokenIdp();
});
afterEach(() => {
  sources.closeAll();
  idp.setMode("ok");
  idp.setExpiresIn(300);
});
afterAll(() => {
  stopUnreachableIssuers();
  return idp.stop();
});

const source = (options: { issuer?: string; refreshAt?: number; withCredentials?: boolean } = {}) =>
  sources.open({ ...options, issuer: options.issuer ?? idp.issuer });

test("auth disabled (no credentials): an empty token and tenant svc-internal, and the IdP is never asked", async () => {
  const before = { ...idp.counts };
  const { source: disabled } = source({ withCredentials: false });
  await disabled.start();
  expect(await disabled.token()).toEqual({ accessToken: "", tenantId: "svc-internal" });
  expect(idp.counts).toEqual(before);
});

test("start() gets a client-credentials token; token() serves it from memory; tenantId is its tenant_id", async () => {
  const { source: s, log } = source();
  await s.start();
  const tokenRequests = idp.counts.token;
  const first = await s.token();
  const second = await s.token();
  expect(second).toEqual(first);
  expect(first.tenantId).toBe("svc-internal");
  expect(first.accessToken.split(".")).toHaveLength(3);
  expect(idp.counts.token).toBe(tokenRequests);
  expect(idp.lastForm.value?.get("grant_type")).toBe("client_credentials");
  expect(idp.lastForm.value?.get("client_id")).toBe("svc-components");
  expect(idp.lastForm.value?.get("client_secret")).toBe(credentials.clientSecret);
  expect(log()).toContain("service token obtained");
  expect(log()).not.toContain(credentials.clientSecret);
  expect(log()).not.toContain(first.accessToken);
});

test("concurrent token() calls before any token share one token request", async () => {
  const { source: s } = source();
  const before = idp.counts.token;
  const tokens = await Promise.all([s.token(), s.token(), s.token(), s.token()]);
  expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1);
  expect(idp.counts.token - before).toBe(1);
});

test("401 unauthorized_client → AUTH_SERVICE_CREDENTIALS_REJECTED, not retryable, naming the variables", async () => {
  idp.setMode("reject");
  const { source: s, log } = source();
  const error = await rejectionOf(s.start(), AuthError);
  expect(error.code).toBe("AUTH_SERVICE_CREDENTIALS_REJECTED");
  expect(error.canRetry).toBe(false);
  expect(error.message).toContain("SVC_AUTH_CLIENT_ID");
  expect(error.message).toContain("SVC_AUTH_CLIENT_SECRET");
  expect(error.message).not.toContain(credentials.clientSecret);
  expect(log()).not.toContain(credentials.clientSecret);
});

test("a 503 token endpoint → AUTH_IDP_UNAVAILABLE (retryable)", async () => {
  idp.setMode("unavailable");
  const error = await rejectionOf(source().source.start(), AuthError);
  expect(error.code).toBe("AUTH_IDP_UNAVAILABLE");
  expect(error.canRetry).toBe(true);
  expect(error.message).toContain("503");
});

test("an unreachable IdP → AUTH_IDP_UNAVAILABLE (retryable), from start() and from token()", async () => {
  const { source: s } = source({ issuer: unreachableIssuer() });
  const atStart = await rejectionOf(s.start(), AuthError);
  expect(atStart.code).toBe("AUTH_IDP_UNAVAILABLE");
  expect(atStart.canRetry).toBe(true);
  expect((await rejectionOf(s.token(), AuthError)).code).toBe("AUTH_IDP_UNAVAILABLE");
});

test("a token response that is not JSON → AUTH_IDP_UNAVAILABLE", async () => {
  idp.setMode("not-json");
  expect((await rejectionOf(source().source.start(), AuthError)).code).toBe("AUTH_IDP_UNAVAILABLE");
});

test("a token without tenant_id (the client lacks its mapper) → AUTH_CLAIM_MISSING on tenant_id", async () => {
  idp.setMode("no-tenant");
  const error = await rejectionOf(source().source.start(), AuthError);
  expect(error.code).toBe("AUTH_CLAIM_MISSING");
  expect(error.subject).toBe("tenant_id");
});

test("discovery naming another issuer → AuthConfigError on SVC_AUTH_ISSUER", async () => {
  const other = await startTestIssuer({ discoveryIssuer: (issuer) => `${issuer}/` });
  try {
    const error = await rejectionOf(source({ issuer: other.issuer }).source.start(), AuthConfigError);
    expect(error.subject).toBe("SVC_AUTH_ISSUER");
  } finally {
    await other.stop();
  }
});

test("the verifier and the token source of one process share one discovery fetch", async () => {
  const shared = await startTestIssuer(); // discovery without token_endpoint: the source fails after discovery
  try {
    const core = createAuthCore({ config: testConfig(shared), ...captureLogger() });
    await core.start();
    const error = await rejectionOf(source({ issuer: shared.issuer }).source.start(), AuthError);
    expect(error.message).toContain("token_endpoint");
    expect(shared.counts.discovery).toBe(1);
  } finally {
    await shared.stop();
  }
});

test("renewal: a new token arrives in the background at refreshAt of the lifetime", async () => {
  idp.setExpiresIn(2);
  const { source: s } = source({ refreshAt: 0.3 });
  await s.start();
  const first = await s.token();
  await waitFor("a renewed token", async () => (await s.token()).accessToken !== first.accessToken || undefined, {
    timeoutMs: 5_000,
    intervalMs: 50,
  });
});

test("a failed renewal keeps the current token until it expires and retries; an expired one is refused", async () => {
  idp.setExpiresIn(3);
  const { source: s, log } = source({ refreshAt: 0.1 });
  await s.start();
  const first = await s.token();
  idp.setMode("unavailable");
  const requestsAtOutage = idp.counts.token;
  // renewals fail and are retried (backoff), while token() still serves the token held
  await waitFor("two failed renewals", async () => idp.counts.token >= requestsAtOutage + 2 || undefined, {
    timeoutMs: 5_000,
    intervalMs: 50,
  });
  expect(await s.token()).toEqual(first);
  expect(log()).toContain("renewal failed");
  // once it has expired, token() itself asks the IdP and rejects with the typed error
  const expired = await waitFor(
    "token() to reject",
    async () => {
      try {
        await s.token();
        return undefined;
      } catch (error) {
        return error;
      }
    },
    { timeoutMs: 6_000, intervalMs: 100 },
  );
  expect(expired).toBeInstanceOf(AuthError);
  expect((expired as AuthError).code).toBe("AUTH_IDP_UNAVAILABLE");
  // the IdP back: the background retry (or the next token()) gets a new token
  idp.setMode("ok");
  await waitFor(
    "a new token after the outage",
    async () => ((await s.token()).accessToken !== first.accessToken ? true : undefined),
    { timeoutMs: 8_000, intervalMs: 100 },
  );
});

test("close() stops the renewals", async () => {
  idp.setExpiresIn(2);
  const { source: s } = source({ refreshAt: 0.1 });
  await s.start();
  const startedAt = Date.now();
  s.close();
  const after = idp.counts.token;
  // the renewal was due 200 ms after the token; let three times that pass, then nothing may have been asked
  await waitFor("the renewal's due time to pass", async () => Date.now() - startedAt > 600 || undefined, {
    timeoutMs: 2_000,
    intervalMs: 50,
  });
  expect(idp.counts.token).toBe(after);
});

test("refreshAt outside (0, 1) is refused", () => {
  expect(() => source({ refreshAt: 1 })).toThrow(RangeError);
  expect(() => source({ refreshAt: 0 })).toThrow(RangeError);
});
