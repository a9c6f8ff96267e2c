import { afterAll, beforeAll, expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { decodeJwt } from "jose";
import { refreshAccessToken, SdkError } from "../index.ts";
import { createTestRealm, type TestRealm } from "./support/keycloak-realm.ts";

let realm: TestRealm;

beforeAll(async () => {
  realm = await createTestRealm(60);
}, 60_000);

afterAll(async () => {
  await realm?.remove();
});

test("the refresh_token grant returns a new access token for the same user", async () => {
  const tokens = await realm.issueTokens();
  const next = await refreshAccessToken({
    tokenEndpoint: realm.tokenEndpoint,
    clientId: realm.clientId,
    refreshToken: tokens.refreshToken,
  });
  expect(next.accessToken).not.toBe(tokens.accessToken);
  expect(decodeJwt(next.accessToken).sub).toBe(decodeJwt(tokens.accessToken).sub ?? "");
  expect(next.refreshToken.length).toBeGreaterThan(0);
});

test("a loopback plain-HTTP IdP gets X-Forwarded-Proto: https and a form-encoded body", async () => {
  let seen: { proto: string | null; type: string | null; body: string } | undefined;
  const idp = Bun.serve({
    port: 0,
    async fetch(request) {
      seen = {
        proto: request.headers.get("x-forwarded-proto"),
        type: request.headers.get("content-type"),
        body: await request.text(),
      };
      return Response.json({ access_token: "a2" });
    },
  });
  try {
    const next = await refreshAccessToken({
      tokenEndpoint: `http://127.0.0.1:${idp.port}/t`,
      clientId: "svc-cli",
      refreshToken: "r1",
    });
    expect(next).toEqual({ accessToken: "a2", refreshToken: "r1" });
    expect(seen?.proto).toBe("https");
    expect(seen?.type).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(seen?.body))).toEqual({
      grant_type: "refresh_token",
      client_id: "svc-cli",
      refresh_token: "r1",
    });
  } finally {
    await idp.stop(true);
  }
});

test("an IdP that is not listening: SDK_REFRESH_FAILED, retryable", async () => {
  const idp = Bun.serve({ port: 0, fetch: () => new Response("") });
  const endpoint = `http://127.0.0.1:${idp.port}/t`;
  await idp.stop(true);
  const error = await rejectionOf(
    refreshAccessToken({ tokenEndpoint: endpoint, clientId: "svc-cli", refreshToken: "r" }),
    SdkError,
  );
  expect(error.code).toBe("SDK_REFRESH_FAILED");
  expect(error.canRetry).toBe(true);
});

test("a 200 answer without access_token (not JSON) is a failed refresh", async () => {
  const idp = Bun.serve({ port: 0, fetch: () => new Response("<html>proxy</html>") });
  try {
    const error = await rejectionOf(
      refreshAccessToken({ tokenEndpoint: `http://127.0.0.1:${idp.port}/t`, clientId: "svc-cli", refreshToken: "r" }),
      SdkError,
    );
    expect(error.code).toBe("SDK_REFRESH_FAILED");
  } finally {
    await idp.stop(true);
  }
});
