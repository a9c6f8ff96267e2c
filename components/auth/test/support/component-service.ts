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
} from "@grpc/grpc-js";
import { bindGrpcServer } from "@svc/common";
import { type AuthCore, authorizeService, callerOf } from "../../index.ts";
import { jsonMethod } from "./json-method.ts";

const method = (name: string, responseStream: boolean) => jsonMethod(`/test.ComputeService/${name}`, responseStream);

/** A small JSON-coded internal service: one unary and one server-streaming method, both `component.rpc`. */
const definition: ServiceDefinition = { add_compute: method("add_compute", false), watch: method("watch", true) };
const ClientCtor = makeGenericClientConstructor(definition, "ComputeService");

export type ComputeClient = Client & {
  add_compute(req: unknown, cb: (err: ServiceError | null, res?: unknown) => void): void;
  watch(req: unknown): NodeJS.ReadableStream;
};

/** What a handler saw: the verified caller and the raw `authorization` values (to check what was left out). */
export interface Seen {
  principalId: string;
  tenantId: string;
  roles: readonly string[];
  authorization: unknown[];
}

/** Real grpc-js servers (port 0) wrapped with `authorizeService(core, …, "component.rpc")`, and their clients. */
export function componentServiceHarness() {
  const seen: Seen[] = [];
  const servers: Server[] = [];
  const clients: Client[] = [];
  const implementation = {
    add_compute(call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
      const caller = callerOf(call);
      seen.push({
        principalId: caller.principalId,
        tenantId: caller.tenantId,
        roles: caller.roles,
        authorization: call.metadata.get("authorization"),
      });
      callback(null, { ok: true, principal: caller.principalId });
    },
    watch(call: ServerWritableStream<unknown, unknown>) {
      call.write({ tenant: callerOf(call).tenantId });
      call.end();
    },
  };
  return {
    seen,
    /** Serves the service with `core` on 127.0.0.1:0; returns its address. */
    async serve(core: AuthCore): Promise<string> {
      const server = new Server();
      server.addService(
        definition,
        authorizeService(core, definition, implementation, { add_compute: "component.rpc", watch: "component.rpc" }),
      );
      servers.push(server);
      return `127.0.0.1:${await bindGrpcServer(server, "127.0.0.1:0")}`;
    },
    client(address: string, interceptors: Interceptor[]): ComputeClient {
      const made = new ClientCtor(address, credentials.createInsecure(), { interceptors }) as unknown as ComputeClient;
      clients.push(made);
      return made;
    },
    close(): void {
      for (const c of clients) c.close();
      for (const s of servers) s.forceShutdown();
    },
  };
}

export const unary = (client: ComputeClient) =>
  new Promise<{ error: ServiceError | null; response?: unknown }>((resolve) =>
    client.add_compute({ node: "n1" }, (error, response) => resolve({ error, response })),
  );

export const streamed = (client: ComputeClient) =>
  new Promise<{ messages: unknown[]; error?: ServiceError }>((resolve) => {
    const messages: unknown[] = [];
    const stream = client.watch({});
    stream.on("data", (m: unknown) => messages.push(m));
    stream.on("error", (error: ServiceError) => resolve({ messages, error }));
    stream.on("end", () => resolve({ messages }));
  });
