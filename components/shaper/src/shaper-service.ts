import type { ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from "@grpc/grpc-js";
import { answerUnary } from "@svc/component-runtime";
import type {
  LoadKeysRequest,
  LoadKeysResponse,
  RunJobRequest,
  RunJobResponse,
  StatusRequest,
  StatusResponse,
} from "@svc/proto";
import type { Logger } from "pino";
import type { JobRunner } from "./job-runner.ts";
import type { KeyRing } from "./key-ring.ts";

export interface ShaperServiceOptions {
  pod: string;
  keys: KeyRing;
  jobs: JobRunner;
  logger: Logger;
  /** The term in office (undefined with no election). */
  term: () => number | undefined;
}

/** `svc.shaper.v1.ShaperService` (behind the follower guard). */
export function shaperImplementation(options: ShaperServiceOptions): UntypedServiceImplementation {
  const { keys, jobs, logger, pod } = options;
  const implementation = {
    loadKeys(call: ServerUnaryCall<LoadKeysRequest, LoadKeysResponse>, done: sendUnaryData<LoadKeysResponse>) {
      const keyCount = keys.replace(call.request.keys);
      logger.info({ event: "keys-loaded", at: Date.now(), keyCount }, "keys loaded");
      done(null, { keyCount });
    },
    runJob(call: ServerUnaryCall<RunJobRequest, RunJobResponse>, done: sendUnaryData<RunJobResponse>) {
      const { taskId, indexName, input } = call.request;
      answerUnary(async () => {
        const outcome = await jobs.run(taskId, indexName, input, pod, options.term());
        logger.info({ event: "job", at: Date.now(), task: taskId, ran: outcome.ran }, "job recorded");
        return outcome;
      }, done);
    },
    status(_call: ServerUnaryCall<StatusRequest, StatusResponse>, done: sendUnaryData<StatusResponse>) {
      done(null, { pod, term: options.term() ?? 0, keyCount: keys.size, incarnation: keys.incarnation });
    },
  };
  return implementation as unknown as UntypedServiceImplementation;
}
