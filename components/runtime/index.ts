export { abortableSleep } from "./src/abortable-sleep.ts";
export { type ComponentAuth, startComponentAuth } from "./src/component-auth.ts";
export {
  ModelStoreEnv,
  parseAddressList,
  type S3Settings,
  ShardObjectsEnv,
  shardObjectsSettings,
} from "./src/components-env.ts";
export {
  type DeployedComponent,
  type DeploymentSettings,
  deploymentEnv,
  HA_COMPONENTS,
  type HaComponent,
} from "./src/deployment-env.ts";
export { RUNTIME_ERROR_CODES, RuntimeError, type RuntimeErrorCode } from "./src/errors.ts";
export { answerUnary, grpcRefusal, grpcStatusOf } from "./src/grpc-status.ts";
export { ensureModelTables, tableOf } from "./src/model-tables.ts";
export { configInvalid, parseEnv } from "./src/parse-env.ts";
export { type LogLevel, parseReplicaConfig, type ReplicaConfig, ReplicaEnvSchema } from "./src/replica-config.ts";
export { type ReplicaLoggerOptions, replicaLogger } from "./src/replica-logger.ts";
export { callUnary, ServingReplicaClient, type UnaryMethod } from "./src/serving-replica-client.ts";
export {
  ADDRESS_ANNOTATIONS,
  type Replica,
  type ReplicaService,
  type ServingContext,
  type StartReplicaOptions,
  startReplica,
} from "./src/start-replica.ts";
export { TermFence, type TermFenceOptions } from "./src/term-fence.ts";
