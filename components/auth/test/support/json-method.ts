import type { MethodDefinition } from "@grpc/grpc-js";

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};

/** A JSON-coded gRPC method at `path` (no protobuf needed for a test service): unary, or server-streaming. */
export const jsonMethod = (path: string, responseStream: boolean): MethodDefinition<unknown, unknown> => ({
  path,
  requestStream: false,
  responseStream,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});
