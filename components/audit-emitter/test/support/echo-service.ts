import {
  type Client,
  type ClientDuplexStream,
  type ClientReadableStream,
  type ClientWritableStream,
  credentials,
  Metadata,
  makeGenericClientConstructor,
  Server,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { bindGrpcServer } from "@svc/common";
import { annotate, type CallAnnotation } from "../../index.ts";

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};

const method = (name: string, requestStream: boolean, responseStream: boolean) => ({
  path: `/test.Echo/${name}`,
  requestStream,
  responseStream,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});

/** A hand-built JSON service with one method of each gRPC shape. */
export const echoDefinition: ServiceDefinition = {
  unary: method("unary", false, false),
  server_stream: method("server_stream", false, true),
  client_stream: method("client_stream", true, false),
  bidi: method("bidi", true, true),
};

/** What a test asks the handler to do. */
export interface EchoRequest {
  name: string;
  /** End the call with this status code (after `count` messages for a stream). */
  fail?: number;
  /** Messages a server stream sends. */
  count?: number;
  /** Never answer (cancellation and deadline tests). */
  hang?: boolean;
  /** Throw from the handler. */
  throws?: boolean;
  annotation?: CallAnnotation;
}

export interface EchoService {
  implementation: UntypedServiceImplementation;
  /** Handler invocations (a call refused before its handler does not count). */
  handled: number;
}

const failure = (code: number) => Object.assign(new Error(`failed with ${code}`), { code, metadata: new Metadata() });

export function echoService(): EchoService {
  const service: EchoService = {
    handled: 0,
    implementation: {
      unary(call: ServerUnaryCall<EchoRequest, unknown>, callback: sendUnaryData<unknown>) {
        service.handled += 1;
        const request = call.request;
        if (request.annotation) annotate(call, request.annotation);
        if (request.throws) throw new Error("handler bug");
        if (request.hang) return;
        if (request.fail !== undefined) callback(failure(request.fail));
        else callback(null, { echo: request.name });
      },
      server_stream(call: ServerWritableStream<EchoRequest, unknown>) {
        service.handled += 1;
        const request = call.request;
        if (request.annotation) annotate(call, request.annotation);
        for (let i = 0; i < (request.count ?? 0); i++) call.write({ echo: request.name, i });
        if (request.hang) return;
        if (request.fail !== undefined) call.emit("error", failure(request.fail));
        else call.end();
      },
      client_stream(call: ServerReadableStream<EchoRequest, unknown>, callback: sendUnaryData<unknown>) {
        service.handled += 1;
        const names: string[] = [];
        call.on("data", (request: EchoRequest) => names.push(request.name));
        call.on("end", () => callback(null, { echo: names.join(",") }));
      },
      bidi(call: ServerDuplexStream<EchoRequest, unknown>) {
        service.handled += 1;
        call.on("data", (request: EchoRequest) => call.write({ echo: request.name }));
        call.on("end", () => call.end());
      },
    },
  };
  return service;
}

export type EchoClient = Client & {
  unary(
    request: EchoRequest,
    metadata: Metadata,
    options: object,
    callback: (error: ServiceError | null, response?: unknown) => void,
  ): void;
  server_stream(request: EchoRequest, metadata: Metadata): ClientReadableStream<unknown>;
  client_stream(
    metadata: Metadata,
    callback: (error: ServiceError | null, response?: unknown) => void,
  ): ClientWritableStream<EchoRequest>;
  bidi(metadata: Metadata): ClientDuplexStream<EchoRequest, unknown>;
};

const EchoClientConstructor = makeGenericClientConstructor(echoDefinition, "Echo");

/** Binds `server` on 127.0.0.1 port 0 and returns a client for it. */
export async function listen(server: Server): Promise<{ client: EchoClient; port: number }> {
  const port = await bindGrpcServer(server, "127.0.0.1:0");
  const client = new EchoClientConstructor(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as EchoClient;
  return { client, port };
}

/** A unary call as a promise of its status code (0 for OK) and response. */
export function callUnary(
  client: EchoClient,
  request: EchoRequest,
  metadata: Metadata,
  options: object = {},
): Promise<{ code: number; response?: unknown; details?: string }> {
  return new Promise((resolve) =>
    client.unary(request, metadata, options, (error, response) =>
      resolve(error ? { code: error.code, details: error.details } : { code: 0, response }),
    ),
  );
}

/** Reads a server stream to its end: the messages and the final status code. */
export function readStream(stream: ClientReadableStream<unknown>): Promise<{ code: number; messages: unknown[] }> {
  const messages: unknown[] = [];
  return new Promise((resolve) => {
    stream.on("data", (message: unknown) => messages.push(message));
    stream.on("error", (error: ServiceError) => resolve({ code: error.code, messages }));
    stream.on("status", (status: { code: number }) => {
      if (status.code === 0) resolve({ code: 0, messages });
    });
  });
}

export { Server };
