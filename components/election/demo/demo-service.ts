import type { ServerUnaryCall, ServiceDefinition, sendUnaryData, UntypedServiceImplementation } from "@grpc/grpc-js";

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};

/** `svc.demo.v1.Demo/Work`: the demo's one business method (JSON-coded; no .proto needed for a test service). */
export const DemoService: ServiceDefinition = {
  Work: {
    path: "/svc.demo.v1.Demo/Work",
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};

export interface ServedCall {
  /** Wall-clock milliseconds with sub-millisecond precision (timeOrigin + performance.now()). */
  at: number;
  term: number | undefined;
  id: unknown;
}

/** Answers `{ pod, term }` and reports every call it serves (the guard has let it through). */
export function demoImplementation(
  pod: string,
  term: () => number | undefined,
  served: (call: ServedCall) => void,
): UntypedServiceImplementation {
  return {
    Work(call: ServerUnaryCall<{ id?: unknown }, unknown>, callback: sendUnaryData<unknown>) {
      const at = performance.timeOrigin + performance.now();
      const current = term();
      served({ at, term: current, id: call.request?.id });
      callback(null, { pod, term: current });
    },
  };
}
