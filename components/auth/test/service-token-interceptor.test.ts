/**
 * The client interceptor end to end over real grpc-js (server on port 0 wrapped with `authorizeService` for
 * `component.rpc`), its tokens from the IdP stand-in (switchable failures). With the stack's real Keycloak:
 * service-token-keycloak.test.ts.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import {
  type Client,
  credentials,
  type Interceptor,
  makeGenericClientConstructor,
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { bindGrpcServer } from "@svc/common";
import {
  type AuthCore,
  authorizeService,
  callerOf,
  createAuthCore,
  createServiceTokenSource,
  parseAuthConfig,
  type ServiceTokenSource,
  serviceTokenInterceptor,
} from "../index.ts";
import { type StandInTokenIdp, startStandInTokenIdp, unreachableIssuer } from "./support/stand-in-token-idp.ts";
import { captureLogger, DISABLED_ENV } from "./support/test-issuer.ts";

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};
const method = (name: string, responseStream: boolean) => ({
  path: `/test.ComputeService/${name}`,
  requestStream: false,
  responseStream,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});
const definition: ServiceDefinition = { add_compute: method("add_compute", false), watch: method("watch", true) };

type ComputeClient = Client & {
  add_compute(req: unknown, cb: (err: ServiceError | null, res?: unknown) => void): void;
  watch(req: unknown): NodeJS.ReadableStream;
};

/** What the handler saw: the verified caller and the raw headers (to check what the interceptor left out). */
const seen: Array<{ principalId: string; tenantId: string; authorization: unknown[] }> = [];

const implementation = {
  add_compute(call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
    const caller = callerOf(call);
    seen.push({
      principalId: caller.principalId,
      tenantId: caller.tenantId,
      authorization: call.metadata.get("authorization"),
    });
    callback(null, { ok: true, principal: caller.principalId });
  },
  watch(call: ServerWritableStream<unknown, unknown>) {
    call.write({ tenant: callerOf(call).tenantId });
    call.end();
  },
};

const ClientCtor = makeGenericClientConstructor(definition, "ComputeService");
const servers: Server[] = [];
const clients: Client[] = [];
const sources: ServiceTokenSource[] = [];

async function serve(core: AuthCore): Promise<string> {
  const server = new Server();
  server.addService(
    definition,
    authorizeService(core, definition, implementation, { add_compute: "component.rpc", watch: "component.rpc" }),
  );
  servers.push(server);
  return `127.0.0.1:${await bindGrpcServer(server, "127.0.0.1:0")}`;
}

function client(address: string, interceptors: Interceptor[]): ComputeClient {
  const made = new ClientCtor(address, credentials.createInsecure(), { interceptors }) as unknown as ComputeClient;
  clients.push(made);
  return made;
}

function tokenSource(issuer: string, withCredentials = true): ServiceTokenSource {
  const source = createServiceTokenSource({
    issuer,
    credentials: withCredentials ? { clientId: "svc-components", clientSecret: "interceptor-test-secret" } : undefined,
    logger: captureLogger().logger,
  });
  sources.push(source);
  return source;
}

const unary = (c: ComputeClient) =>
  new Promise<{ error: ServiceError | null; response?: unknown }>((resolve) =>
    c.add_compute({ node: "n1" }, (error, response) => resolve({ error, response })),
  );

const streamed = (c: ComputeClient) =>
  new Promise<{ messages: unknown[]; error?: ServiceError }>((resolve) => {
    const messages: unknown[] = [];
    const stream = c.watch({});
    stream.on("data", (m: unknown) => messages.push(m));
    stream.on("error", (error: ServiceError) => resolve({ messages, error }));
    stream.on("end", () => resolve({ messages }));
  });

let idp: StandInTokenIdp;
let address: string;
beforeAll(async () => {
  idp = await startStandInTokenIdp();
  const core = createAuthCore({ config: parseAuthConfig({ SVC_AUTH_ISSUER: idp.issuer }), ...captureLogger() });
  await core.start();
  address = await serve(core);
});
afterEach(() => idp.setMode("ok"));
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of servers) s.forceShutdown();
  for (const s of sources) s.close();
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
  const open = await serve(core);
  const { error, response } = await unary(client(open, [serviceTokenInterceptor(tokenSource(idp.issuer, false))]));
  expect(error).toBeNull();
  expect(response).toEqual({ ok: true, principal: "anonymous" });
  expect(seen.at(-1)).toMatchObject({ tenantId: "svc-internal", authorization: [] });
});
