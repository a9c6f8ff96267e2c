import { Metadata, type ServerUnaryCall, type sendUnaryData, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { answerUnary, callUnary } from "@svc/component-runtime";
import type { BackendServiceClient, ComputeServiceClient, endpointV1 } from "@svc/proto";
import type { ComponentRoute } from "./component-route.ts";
import { type ClientPool, routeCall } from "./route-call.ts";

export interface EndpointRoutes {
  backend: { route: ComponentRoute; pool: ClientPool<BackendServiceClient> };
  compute: { route: ComponentRoute; pool: ClientPool<ComputeServiceClient> };
}

/**
 * `svc.endpoint.v1.EndpointService`: each application call goes to the serving replica of the component that owns
 * it (backend: indexes and jobs; compute: shards), with the caller's deadline capped at `callTimeoutMs`.
 */
export function endpointImplementation(routes: EndpointRoutes, callTimeoutMs: number): UntypedServiceImplementation {
  const backend = <R>(run: (client: BackendServiceClient) => Promise<R>) =>
    routeCall(routes.backend.route, routes.backend.pool, run);
  const md = () => new Metadata();
  const implementation = {
    createIndex(
      call: ServerUnaryCall<endpointV1.CreateIndexRequest, endpointV1.CreateIndexResponse>,
      done: sendUnaryData<endpointV1.CreateIndexResponse>,
    ) {
      answerUnary(() => backend((c) => callUnary(c.createIndex.bind(c), call.request, md(), callTimeoutMs)), done);
    },
    submitJob(
      call: ServerUnaryCall<endpointV1.SubmitJobRequest, endpointV1.SubmitJobResponse>,
      done: sendUnaryData<endpointV1.SubmitJobResponse>,
    ) {
      answerUnary(() => backend((c) => callUnary(c.submitJob.bind(c), call.request, md(), callTimeoutMs)), done);
    },
    getTask(
      call: ServerUnaryCall<endpointV1.GetTaskRequest, endpointV1.GetTaskResponse>,
      done: sendUnaryData<endpointV1.GetTaskResponse>,
    ) {
      answerUnary(async () => {
        const task = await backend((c) => callUnary(c.getTask.bind(c), call.request, md(), callTimeoutMs));
        return { state: task.state, result: task.result };
      }, done);
    },
    listShards(
      _call: ServerUnaryCall<endpointV1.ListShardsRequest, endpointV1.ListShardsResponse>,
      done: sendUnaryData<endpointV1.ListShardsResponse>,
    ) {
      answerUnary(
        () =>
          routeCall(routes.compute.route, routes.compute.pool, (c) =>
            callUnary(c.listShards.bind(c), {}, md(), callTimeoutMs),
          ),
        done,
      );
    },
  };
  return implementation as unknown as UntypedServiceImplementation;
}
