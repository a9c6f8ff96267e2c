/**
 * The client interceptor end to end over real grpc-js (server on port 0 wrapped with `authorizeService` for
 * `component.rpc`), its tokens from the IdP stand-in (switchable failures). With the stack's real Keycloak:
 * service-token-keycloak.test.ts.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { status } from "@grpc/grpc-js";
import { createAuthCore, parseAuthConfig, serviceTokenInterceptor } from "../index.ts";
import { componentServiceHarness, streamed, unary } from "./support/component-service.ts";
import {
  type StandInTokenIdp,
  startStandInTokenIdp,
  stopUnreachableIssuers,
  unreachableIssuer,
} from "./support/stand-in-token-idp.ts";
import { captureLogger, DISABLED_ENV } from "./support/test-issuer.ts";
import { serviceTokenSources } from "./support/token-sources.ts";

const harness = componentServiceHarness();
const { seen, client } = harness;
const sources = serviceTokenSources({ clientId: "svc-components", clientSecret: "interceptor-test-secret" });
const tokenSource = (issuer: string, withCredentials = true) => sources.open({ issuer, withCredentials }).source;

let idp: StandInTokenIdp;
let address: string;
beforeAll(async () => {
  idp = await startStandInTokenIdp();
  const core = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: idp.issuer }), ...captureLogger() });
  await core.start();
  address = await harness.serve(core);
});
afterEach(() => idp.setMode("ok"));
afterAll(async () => {
  stopUnreachableIssuers();
  harness.close();
  sources.closeAll();
  await idp.stop();
});

test("with the interceptor a component.rpc call is answered; the server sees the components' principal and tenant", async () => {
  const { error, response } = await unary(client(address, [serviceTokenInterceptor(tokenSource(idp.issuer))]));
  expect(error).toBeNull();
  expect(response).toEqual({ ok: true, principal: "svc-components" });
  expect(seen.at(-1)?.tenantId).toBe("svc-internal");
});

test("a server-streaming call carries the token too", async () => {
  const { messages, error } = await streamed(client(address, [serviceTokenInterceptor(tokenSource(idp.issuer))]));
  expect(error).toBeUndefined();
  expect(messages).toEqual([{ tenant: "svc-internal" }]);
});

test("without the interceptor the same call is refused UNAUTHENTICATED", async () => {
  const { error } = await unary(client(address, []));
  expect(error?.code).toBe(status.UNAUTHENTICATED);
  expect(error?.details).toContain("AUTH_TOKEN_MISSING");
});

test("IdP unreachable: the call ends UNAVAILABLE naming the code, and never reaches the server", async () => {
  const before = seen.length;
  const { error } = await unary(client(address, [serviceTokenInterceptor(tokenSource(unreachableIssuer()))]));
  expect(error?.code).toBe(status.UNAVAILABLE);
  expect(error?.details).toContain("AUTH_IDP_UNAVAILABLE");
  const stream = await streamed(client(address, [serviceTokenInterceptor(tokenSource(unreachableIssuer()))]));
  expect(stream.error?.code).toBe(status.UNAVAILABLE);
  expect(seen.length).toBe(before);
});

test("credentials refused by the IdP: UNAVAILABLE with AUTH_SERVICE_CREDENTIALS_REJECTED, never the secret", async () => {
  idp.setMode("reject");
  const { error } = await unary(client(address, [serviceTokenInterceptor(tokenSource(idp.issuer))]));
  expect(error?.code).toBe(status.UNAVAILABLE);
  expect(error?.details).toContain("AUTH_SERVICE_CREDENTIALS_REJECTED");
  expect(error?.details).not.toContain("interceptor-test-secret");
});

test("auth disabled on both sides: no authorization header is sent, x-tenant-id is svc-internal", async () => {
  const core = createAuthCore({ config: parseAuthConfig(DISABLED_ENV), ...captureLogger() });
  const open = await harness.serve(core);
  const { error, response } = await unary(client(open, [serviceTokenInterceptor(tokenSource(idp.issuer, false))]));
  expect(error).toBeNull();
  expect(response).toEqual({ ok: true, principal: "anonymous" });
  expect(seen.at(-1)).toMatchObject({ tenantId: "svc-internal", authorization: [] });
});
