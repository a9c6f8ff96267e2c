import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { status } from "@grpc/grpc-js";
import { ExportFormat, HealthCheckResponse_ServingStatus } from "@svc/proto";
import { rejectionOf, waitFor } from "@svc/testkit";
import { createClient, SdkError, type SvcClient } from "../index.ts";
import { startCountingIdp } from "./support/counting-idp.ts";
import { startHoldProxy } from "./support/hold-proxy.ts";
import { makePki, type TestPki } from "./support/pki.ts";
import { startTestServer, type TestServer } from "./support/test-server.ts";

const TOKEN = "header.payload.signature";

const codeOf = async (promise: Promise<unknown>) => (await rejectionOf(promise, SdkError)).code;

let pki: TestPki;
let plain: TestServer;
let tls: TestServer;

beforeAll(async () => {
  pki = makePki();
  plain = await startTestServer();
  tls = await startTestServer({ key: pki.serverKey, cert: pki.serverCert });
});

afterAll(async () => {
  await plain?.stop();
  await tls?.stop();
  pki?.remove();
});

async function using<T>(client: SvcClient, body: (client: SvcClient) => Promise<T>): Promise<T> {
  try {
    return await body(client);
  } finally {
    client.close();
  }
}

describe("connection security", () => {
  test("a token makes secure the default, so a plaintext server fails with SDK_TLS_HANDSHAKE_FAILED naming secure: false", async () => {
    await using(
      createClient({ address: plain.address, access_token: TOKEN, call_timeout_ms: 5000 }),
      async (client) => {
        expect(client.secure).toBe(true);
        const error = await client.health().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SdkError);
        expect((error as SdkError).code).toBe("SDK_TLS_HANDSHAKE_FAILED");
        expect((error as SdkError).subject).toBe("secure");
        expect((error as SdkError).message).toContain("secure: false");
      },
    );
  });

  test("without a token secure defaults to false", async () => {
    await using(createClient({ address: plain.address }), async (client) => {
      expect(client.secure).toBe(false);
      const response = await client.health();
      expect(response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect(plain.seen.at(-1)?.authorization).toBeUndefined();
    });
  });

  test("secure: false with a token sends Bearer <token> and x-tenant-id as call metadata", async () => {
    const options = { address: plain.address, access_token: TOKEN, secure: false, tenant_id: "tenant-b" };
    await using(createClient(options), async (client) => {
      const response = await client.health();
      expect(response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect(plain.seen.at(-1)).toEqual({ method: "check", authorization: `Bearer ${TOKEN}`, tenantId: "tenant-b" });
    });
  });

  test("TLS with ca_cert: the call succeeds and the bearer token travels as call credentials", async () => {
    const options = { address: tls.address, access_token: TOKEN, ca_cert: pki.caCert, tenant_id: "tenant-t" };
    await using(createClient(options), async (client) => {
      const response = await client.health();
      expect(response.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect(tls.seen.at(-1)).toEqual({ method: "check", authorization: `Bearer ${TOKEN}`, tenantId: "tenant-t" });
    });
  });

  test("TLS by host name (localhost) with ca_cert", async () => {
    const options = { address: `localhost:${tls.port}`, secure: true, ca_cert: pki.caCert };
    await using(createClient(options), async (client) => {
      expect((await client.health()).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    });
  });

  test("TLS with a CA that did not issue the server certificate fails with SDK_TLS_CERT_REJECTED", async () => {
    const options = { address: tls.address, access_token: TOKEN, ca_cert: pki.otherCaCert };
    await using(createClient(options), async (client) => {
      const error = await client.health().catch((e: unknown) => e);
      expect((error as SdkError).code).toBe("SDK_TLS_CERT_REJECTED");
      expect((error as SdkError).subject).toBe("ca_cert");
    });
  });

  test("TLS without ca_cert uses the system roots, which do not trust the test CA", async () => {
    await using(createClient({ address: tls.address, secure: true }), async (client) => {
      expect(await codeOf(client.health())).toBe("SDK_TLS_CERT_REJECTED");
    });
  });

  test("KMS: TLS by default with kms_ca_cert; kms_secure: false against a plaintext KMS", async () => {
    const kms = createClient({ address: plain.address, kms_address: tls.address, kms_ca_cert: pki.caCert });
    await using(kms, async (client) => {
      expect((await client.kmsHealth()).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    });
    await using(createClient({ address: plain.address, kms_address: plain.address }), async (client) => {
      const error = await client.kmsHealth().catch((e: unknown) => e);
      expect((error as SdkError).code).toBe("SDK_TLS_HANDSHAKE_FAILED");
      expect((error as SdkError).message).toContain("kms_secure: false");
    });
    await using(
      createClient({ address: plain.address, kms_address: plain.address, kms_secure: false }),
      async (client) => {
        expect((await client.kmsHealth()).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      },
    );
  });

  test("kmsHealth without kms_address is a config error", async () => {
    await using(createClient({ address: plain.address }), async (client) => {
      expect(await codeOf(client.kmsHealth())).toBe("SDK_CONFIG_INVALID");
    });
  });

  test("connect() resolves for a reachable server and fails with SDK_UNAVAILABLE for a closed port", async () => {
    await using(createClient({ address: plain.address }), (client) => client.connect(5000));
    const closed = await startTestServer();
    const closedAddress = closed.address;
    await closed.stop();
    await using(createClient({ address: closedAddress }), async (client) => {
      expect(await codeOf(client.connect(300))).toBe("SDK_UNAVAILABLE");
      expect(await codeOf(client.health())).toBe("SDK_UNAVAILABLE");
    });
  });
});

describe("call credentials", () => {
  test("a secure call takes its bearer token from the token source when it is sent, not from a copy", async () => {
    const idp = startCountingIdp({ answer: () => Response.json({ access_token: "renewed-token" }) });
    // The proxy holds the TCP connection: the call has passed its pre-flight but cannot send yet.
    const proxy = await startHoldProxy(tls.port);
    const client = createClient({
      address: `127.0.0.1:${proxy.port}`,
      access_token: "first-token",
      refresh_token: "opaque-refresh",
      ca_cert: pki.caCert,
      idp: { token_endpoint: idp.tokenEndpoint },
    });
    try {
      const call = client.health();
      await waitFor("the call's connection", async () => (proxy.accepted > 0 ? true : undefined), {
        timeoutMs: 5000,
        intervalMs: 10,
      });
      await client.renewAccessToken();
      proxy.release();
      expect((await call).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect(tls.seen.at(-1)?.authorization).toBe("Bearer renewed-token");
      expect(idp.requests).toHaveLength(1);
    } finally {
      client.close();
      await proxy.stop();
      await idp.stop();
    }
  });
});

describe("audit wrappers", () => {
  test("auditListEvents sends the request and a generated header.id", async () => {
    await using(createClient({ address: plain.address, tenant_id: "tenant-a" }), async (client) => {
      const response = await client.auditListEvents({
        startTime: "2024-05-01T00:00:00Z",
        endTime: "2024-05-02T00:00:00Z",
        pageSize: 7,
      });
      expect(response.totalCount).toBe(7);
      expect(response.nextPageToken).toMatch(/^[0-9a-f-]{36}$/);
      expect(plain.seen.at(-1)).toMatchObject({ method: "listEvents", tenantId: "tenant-a" });
    });
  });

  test("auditExportEvents returns JSONL data and keeps a caller's header.id", async () => {
    await using(createClient({ address: plain.address }), async (client) => {
      const response = await client.auditExportEvents({
        header: { id: "req-42" },
        startTime: "2024-05-01T00:00:00Z",
        endTime: "2024-05-02T00:00:00Z",
        format: ExportFormat.EXPORT_FORMAT_JSON,
      });
      const lines = response.data.toString("utf8").trim().split("\n");
      expect(JSON.parse(lines[0] ?? "{}")).toEqual({ id: "req-42", action: "export", result: "OK" });
    });
  });
});

describe("call failures", () => {
  test.each([
    [status.UNAUTHENTICATED, "SDK_UNAUTHENTICATED"],
    [status.PERMISSION_DENIED, "SDK_PERMISSION_DENIED"],
    [status.UNAVAILABLE, "SDK_UNAVAILABLE"],
    [status.NOT_FOUND, "SDK_CALL_FAILED"],
  ])("server status %p maps to %s", async (code, expected) => {
    const server = await startTestServer();
    server.failWith = { code, details: "audience mismatch" };
    try {
      await using(createClient({ address: server.address }), async (client) => {
        const error = await client.health().catch((e: unknown) => e);
        expect((error as SdkError).code).toBe(expected as SdkError["code"]);
        expect((error as SdkError).grpcCode).toBe(code);
      });
    } finally {
      await server.stop();
    }
  });

  test("a call after close() fails with SDK_CLOSED", async () => {
    const client = createClient({ address: plain.address });
    client.close();
    expect(await codeOf(client.health())).toBe("SDK_CLOSED");
  });
});
