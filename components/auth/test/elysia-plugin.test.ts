import { afterAll, beforeAll, expect, test } from "bun:test";
import { Elysia } from "elysia";
import {
  type AuthCore,
  type AuthErrorBody,
  bearerAuth,
  createAuthCore,
  MAX_BEARER_TOKEN_LENGTH,
  parseAuthConfig,
} from "../index.ts";
import { ROUTE_OPTIONS as OPTIONS } from "./support/routes.ts";
import {
  captureLogger,
  DISABLED_ENV,
  mint,
  mintOfLength,
  startTestIssuer,
  type TestIssuer,
  testConfig,
} from "./support/test-issuer.ts";

function app(core: AuthCore) {
  return new Elysia()
    .use(bearerAuth(core, OPTIONS))
    .get("/health/ready", ({ caller }) => ({ ready: true, caller: caller ?? null }))
    .post("/v2/audit/events", ({ caller }) => ({ total_count: 0, principal: caller?.principalId }))
    .get("/admin/keys", ({ caller }) => ({ keys: [], tenant: caller?.tenantId }))
    .get("/admin/unmapped", () => ({ leaked: true }));
}

function request(method: string, path: string, token?: string, tenant?: string) {
  const headers = new Headers({ "content-type": "application/json" });
  if (token) headers.set("authorization", `Bearer ${token}`);
  if (tenant) headers.set("x-tenant-id", tenant);
  return new Request(`http://svc.test${path}`, {
    method,
    headers,
    ...(method === "POST" ? { body: JSON.stringify({ start_time: "2026-01-01T00:00:00Z" }) } : {}),
  });
}

let idp: TestIssuer;
let core: AuthCore;
beforeAll(async () => {
  idp = await startTestIssuer();
  core = createAuthCore({ config: testConfig(idp), ...captureLogger() });
});
afterAll(async () => {
  await idp.stop();
});

const errorCode = async (response: Response) => ((await response.json()) as AuthErrorBody).error.code;

test("200: a security token with audit:read lists, and the route sees the caller", async () => {
  const token = await mint(idp, {
    claims: { realm_access: { roles: ["security"] }, scope: "audit:read", principal_id: "sec-9" },
  });
  const response = await app(core).handle(request("POST", "/v2/audit/events", token, "tenant-a"));
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ total_count: 0, principal: "sec-9" });
});

test("401 + WWW-Authenticate + JSON code for a missing, expired or wrong-audience token", async () => {
  const now = Math.floor(Date.now() / 1000);
  const cases = [
    [undefined, "AUTH_TOKEN_MISSING"],
    [await mint(idp, { claims: { iat: now - 900, exp: now - 600 } }), "AUTH_TOKEN_EXPIRED"],
    [await mint(idp, { claims: { aud: "nope" } }), "AUTH_AUDIENCE_MISMATCH"],
  ] as const;
  for (const [token, code] of cases) {
    const response = await app(core).handle(request("GET", "/admin/keys", token, "tenant-a"));
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toStartWith('Bearer error="invalid_token"');
    expect(response.headers.get("content-type")).toContain("application/json");
    const body = (await response.json()) as AuthErrorBody;
    expect(body.error.code).toBe(code);
    if (code === "AUTH_AUDIENCE_MISMATCH") expect(body.error.message).toContain("audience mismatch");
  }
});

test("403 JSON for a missing role, another tenant, a missing x-tenant-id, and an unmapped route", async () => {
  const app1 = app(core);
  const appToken = await mint(idp, { claims: { realm_access: { roles: ["app"] } } });
  const opsToken = await mint(idp, { claims: { realm_access: { roles: ["ops"] } } });
  const cases = [
    [request("GET", "/admin/keys", appToken, "tenant-a"), "AUTH_PERMISSION_DENIED"],
    [request("GET", "/admin/keys", opsToken, "tenant-b"), "AUTH_TENANT_MISMATCH"],
    [request("GET", "/admin/keys", opsToken), "AUTH_TENANT_HEADER_MISSING"],
    [request("GET", "/admin/unmapped", opsToken, "tenant-a"), "AUTH_PERMISSION_DENIED"],
  ] as const;
  for (const [req, code] of cases) {
    const response = await app1.handle(req);
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBeNull();
    expect(await errorCode(response)).toBe(code);
  }
  const ok = await app1.handle(request("GET", "/admin/keys", opsToken, "tenant-a"));
  expect(ok.status).toBe(200);
  expect(await ok.json()).toEqual({ keys: [], tenant: "tenant-a" });
});

test("public routes need no token; unknown paths stay 404", async () => {
  const ready = await app(core).handle(request("GET", "/health/ready"));
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ ready: true, caller: null });
  expect((await app(core).handle(request("GET", "/nowhere"))).status).toBe(404);
});

test("503 JSON when the IdP cannot be reached", async () => {
  const down = await startTestIssuer();
  down.failJwks(500);
  try {
    const downCore = createAuthCore({ config: testConfig(down), ...captureLogger() });
    const response = await app(downCore).handle(request("GET", "/admin/keys", await mint(down), "tenant-a"));
    expect(response.status).toBe(503);
    expect(await errorCode(response)).toBe("AUTH_IDP_UNAVAILABLE");
  } finally {
    await down.stop();
  }
});

test("auth disabled: no authorization header, anonymous caller of x-tenant-id; header still required", async () => {
  const open = app(createAuthCore({ config: parseAuthConfig(DISABLED_ENV), ...captureLogger() }));
  const response = await open.handle(request("GET", "/admin/keys", undefined, "tenant-z"));
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ keys: [], tenant: "tenant-z" });
  const missing = await open.handle(request("GET", "/admin/keys"));
  expect(missing.status).toBe(403);
  expect(await errorCode(missing)).toBe("AUTH_TENANT_HEADER_MISSING");
});

test("a real listening server answers the same (listen on port 0, stopped in finally)", async () => {
  const server = app(core).listen({ port: 0, hostname: "127.0.0.1" });
  try {
    const port = server.server?.port;
    const response = await fetch(`http://127.0.0.1:${port}/admin/keys`, { headers: { "x-tenant-id": "tenant-a" } });
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("AUTH_TOKEN_MISSING");
  } finally {
    await server.stop();
  }
});

test("a mapped route registered before .use(bearerAuth) is never served: every request answers 500 AUTH_CONFIG_INVALID", async () => {
  const captured = captureLogger();
  const early = new Elysia()
    .get("/admin/keys", () => ({ leaked: true }))
    .get("/health/ready", () => ({ ready: true }))
    .use(bearerAuth(createAuthCore({ config: testConfig(idp), logger: captured.logger }), OPTIONS))
    .post("/v2/audit/events", () => ({ total_count: 0 }));
  const opsToken = await mint(idp, { claims: { realm_access: { roles: ["ops"] } } });
  for (const req of [
    request("GET", "/admin/keys"),
    request("GET", "/admin/keys", opsToken, "tenant-a"),
    request("POST", "/v2/audit/events", opsToken, "tenant-a"),
    request("GET", "/health/ready"),
  ]) {
    const response = await early.handle(req);
    expect(response.status).toBe(500);
    expect(await errorCode(response)).toBe("AUTH_CONFIG_INVALID");
  }
  const logged = captured.lines.filter((line) => line.includes("AUTH_CONFIG_INVALID"));
  expect(logged.length).toBe(1);
  expect(logged[0]).toContain("GET /admin/keys");
  expect(logged[0]).not.toContain("GET /health/ready");
});

test("a public route registered before .use(bearerAuth) is allowed; later routes are guarded", async () => {
  const publicFirst = new Elysia()
    .get("/health/ready", () => ({ ready: true }))
    .use(bearerAuth(core, OPTIONS))
    .get("/admin/keys", () => ({ keys: [] }));
  const ready = await publicFirst.handle(request("GET", "/health/ready"));
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ ready: true });
  const keys = await publicFirst.handle(request("GET", "/admin/keys", undefined, "tenant-a"));
  expect(keys.status).toBe(401);
  expect(await errorCode(keys)).toBe("AUTH_TOKEN_MISSING");
});

test("repeated x-tenant-id / authorization headers are refused (HTTP joins repeats with a comma)", async () => {
  const opsToken = await mint(idp, { claims: { realm_access: { roles: ["ops"] } } });
  const other = await mint(idp, { claims: { realm_access: { roles: ["ops"] }, tenant_id: "tenant-b" } });
  const cases: Array<[Array<[string, string]>, number, string]> = [
    [
      [
        ["authorization", `Bearer ${opsToken}`],
        ["x-tenant-id", "tenant-a"],
        ["x-tenant-id", "tenant-a"],
      ],
      403,
      "AUTH_TENANT_HEADER_INVALID",
    ],
    [
      [
        ["authorization", `Bearer ${opsToken}`],
        ["x-tenant-id", "tenant-a"],
        ["x-tenant-id", "tenant-b"],
      ],
      403,
      "AUTH_TENANT_HEADER_INVALID",
    ],
    [
      [
        ["authorization", `Bearer ${opsToken}`],
        ["authorization", `Bearer ${other}`],
        ["x-tenant-id", "tenant-a"],
      ],
      401,
      "AUTH_TOKEN_MALFORMED",
    ],
    [
      [
        ["authorization", `Bearer ${opsToken}`],
        ["authorization", `Bearer ${opsToken}`],
        ["x-tenant-id", "tenant-a"],
      ],
      401,
      "AUTH_TOKEN_MALFORMED",
    ],
  ];
  for (const [fields, status, code] of cases) {
    const headers = new Headers();
    for (const [name, value] of fields) headers.append(name, value);
    const response = await app(core).handle(new Request("http://svc.test/admin/keys", { headers }));
    expect([response.status, await errorCode(response)]).toEqual([status, code]);
  }
});

test("x-tenant-id is compared exactly: U+00A0, other Unicode spaces, controls and inner whitespace → 403 AUTH_TENANT_HEADER_INVALID", async () => {
  const opsToken = await mint(idp, { claims: { realm_access: { roles: ["ops"] } } });
  const app1 = app(core);
  for (const tenant of [
    "tenant-a\u00a0",
    "\u00a0tenant-a",
    "tenant-a\u0085",
    "ten ant-a",
    "tenant-a\t-x",
    "tenant-a\u0001",
  ]) {
    const response = await app1.handle(request("GET", "/admin/keys", opsToken, tenant));
    expect({ tenant, status: response.status, code: await errorCode(response) }).toEqual({
      tenant,
      status: 403,
      code: "AUTH_TENANT_HEADER_INVALID",
    });
  }
  // over a real connection too; leading/trailing SP/HTAB are the HTTP parser's to strip (optional whitespace)
  const server = app(core).listen({ port: 0, hostname: "127.0.0.1" });
  try {
    const url = `http://127.0.0.1:${server.server?.port}/admin/keys`;
    const nbsp = await fetch(url, {
      headers: { authorization: `Bearer ${opsToken}`, "x-tenant-id": "tenant-a\u00a0" },
    });
    expect([nbsp.status, await errorCode(nbsp)]).toEqual([403, "AUTH_TENANT_HEADER_INVALID"]);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${opsToken}`, "x-tenant-id": "tenant-a" } });
    expect(ok.status).toBe(200);
  } finally {
    await server.stop();
  }
});

test(`a token longer than ${MAX_BEARER_TOKEN_LENGTH} characters → 401 AUTH_TOKEN_TOO_LARGE without any JWKS fetch; a normal one passes`, async () => {
  const fresh = await startTestIssuer();
  try {
    const freshApp = app(createAuthCore({ config: testConfig(fresh), ...captureLogger() }));
    const claims = { realm_access: { roles: ["ops"] } };
    const tooLarge = await mintOfLength(fresh, MAX_BEARER_TOKEN_LENGTH + 1, { claims });
    const refused = await freshApp.handle(request("GET", "/admin/keys", tooLarge, "tenant-a"));
    expect([refused.status, await errorCode(refused)]).toEqual([401, "AUTH_TOKEN_TOO_LARGE"]);
    expect(refused.headers.get("www-authenticate")).toContain("AUTH_TOKEN_TOO_LARGE");
    expect(fresh.counts).toEqual({ discovery: 0, jwks: 0 });
    const largest = await mintOfLength(fresh, MAX_BEARER_TOKEN_LENGTH, { claims });
    expect((await freshApp.handle(request("GET", "/admin/keys", largest, "tenant-a"))).status).toBe(200);
    expect(
      (await freshApp.handle(request("GET", "/admin/keys", await mint(fresh, { claims }), "tenant-a"))).status,
    ).toBe(200);
  } finally {
    await fresh.stop();
  }
});
