import type { S3Client } from "@aws-sdk/client-s3";
import { type ServerUnaryCall, type sendUnaryData, status, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { answerUnary, grpcRefusal } from "@svc/component-runtime";
import type {
  CreateIndexRequest,
  CreateIndexResponse,
  DeleteIndexRequest,
  DeleteIndexResponse,
  GetTaskRequest,
  GetTaskResponse,
  ListIndexesRequest,
  ListIndexesResponse,
  SubmitJobRequest,
  SubmitJobResponse,
} from "@svc/proto";
import { createIndex } from "./create-index.ts";
import type { ShaperLink } from "./shaper-link.ts";
import type { TaskStore } from "./task-store.ts";

export interface BackendServiceOptions {
  store: TaskStore;
  shaper: ShaperLink;
  s3: S3Client;
  bucket: string;
  prefix: string;
  /** The term in office once RecoverTasks() is done; undefined otherwise (calls answer UNAVAILABLE). */
  termInOffice: () => number | undefined;
}

const INDEX_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `svc.backend.v1.BackendService` (behind the follower guard); every write fenced by the term in office. */
export function backendImplementation(options: BackendServiceOptions): UntypedServiceImplementation {
  const { store } = options;
  const inOffice = (): number => {
    const term = options.termInOffice();
    if (term === undefined) throw grpcRefusal(status.UNAVAILABLE, "backend leader is still recovering its tasks");
    return term;
  };
  const checkName = (name: string) => {
    if (!INDEX_NAME.test(name)) {
      throw grpcRefusal(status.INVALID_ARGUMENT, `index name ${JSON.stringify(name)} is invalid`);
    }
  };
  const implementation = {
    createIndex(
      call: ServerUnaryCall<CreateIndexRequest, CreateIndexResponse>,
      done: sendUnaryData<CreateIndexResponse>,
    ) {
      answerUnary(async () => {
        const { name, shardCount } = call.request;
        checkName(name);
        if (shardCount < 1 || shardCount > 64) {
          throw grpcRefusal(status.INVALID_ARGUMENT, "shard_count must be 1 to 64");
        }
        const term = inOffice();
        if ((await store.indexState(name)) !== undefined) {
          throw grpcRefusal(status.ALREADY_EXISTS, `index ${name} exists`);
        }
        const shardIds = await createIndex({ ...options, term, name, shardCount });
        options.shaper.invalidate();
        return { shardIds };
      }, done);
    },
    deleteIndex(
      call: ServerUnaryCall<DeleteIndexRequest, DeleteIndexResponse>,
      done: sendUnaryData<DeleteIndexResponse>,
    ) {
      answerUnary(async () => {
        checkName(call.request.name);
        const taskId = await store.deleteIndex(inOffice(), call.request.name);
        if (!taskId) throw grpcRefusal(status.NOT_FOUND, `no ready index ${call.request.name}`);
        return { taskId };
      }, done);
    },
    submitJob(call: ServerUnaryCall<SubmitJobRequest, SubmitJobResponse>, done: sendUnaryData<SubmitJobResponse>) {
      answerUnary(async () => {
        const { indexName, input } = call.request;
        checkName(indexName);
        const term = inOffice();
        if ((await store.indexState(indexName)) !== "ready") {
          throw grpcRefusal(status.FAILED_PRECONDITION, `index ${indexName} is not ready`);
        }
        return { taskId: await store.enqueue(term, "shaper_job", indexName, { input }) };
      }, done);
    },
    getTask(call: ServerUnaryCall<GetTaskRequest, GetTaskResponse>, done: sendUnaryData<GetTaskResponse>) {
      answerUnary(async () => {
        inOffice();
        const task = /^[0-9a-f-]{36}$/.test(call.request.taskId) ? await store.task(call.request.taskId) : undefined;
        if (!task) throw grpcRefusal(status.NOT_FOUND, `no task ${call.request.taskId}`);
        return { kind: task.kind, state: task.state, result: task.result ?? "", attempts: task.attempts };
      }, done);
    },
    listIndexes(
      _call: ServerUnaryCall<ListIndexesRequest, ListIndexesResponse>,
      done: sendUnaryData<ListIndexesResponse>,
    ) {
      answerUnary(async () => {
        inOffice();
        return { indexes: await store.listIndexes() };
      }, done);
    },
  };
  return implementation as unknown as UntypedServiceImplementation;
}
