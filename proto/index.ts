// Public surface of @svc/proto: the generated messages, enums, gRPC service definitions and client
// constructors. Other packages import from "@svc/proto" only, never from "@svc/proto/gen/...".
//
// Each generated file also exports helper names (`protobufPackage`, `DeepPartial`, `MessageFns`, ...)
// that clash between files; they are reachable through the per-package namespaces below.

export type { AuditServiceServer, DeepPartial, MessageFns } from "./gen/audit/v2/audit.ts";
// Per-package namespaces (everything a generated file exports).
export * as auditV2 from "./gen/audit/v2/audit.ts";
// audit.v2: AuditService (methods list_events / export_events).
export {
  AuditEvent,
  AuditServiceClient,
  AuditServiceService,
  ExportEventsRequest,
  ExportEventsResponse,
  ExportEventsStreamRequest,
  ExportEventsStreamResponse,
  ExportFormat,
  exportFormatFromJSON,
  exportFormatToJSON,
  ListEventsRequest,
  ListEventsResponse,
  RequestHeader,
} from "./gen/audit/v2/audit.ts";
export type { HealthServer } from "./gen/grpc/health/v1/health.ts";
export * as healthV1 from "./gen/grpc/health/v1/health.ts";

// grpc.health.v1: the standard gRPC health checking protocol.
export {
  HealthCheckRequest,
  HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthClient,
  HealthListRequest,
  HealthListResponse,
  HealthService,
  healthCheckResponse_ServingStatusFromJSON,
  healthCheckResponse_ServingStatusToJSON,
} from "./gen/grpc/health/v1/health.ts";
export type { BackendServiceServer } from "./gen/svc/backend/v1/backend.ts";
export * as backendV1 from "./gen/svc/backend/v1/backend.ts";
// svc.backend.v1: BackendService (indexes and tasks).
export {
  BackendServiceClient,
  BackendServiceService,
  CreateIndexRequest,
  CreateIndexResponse,
  DeleteIndexRequest,
  DeleteIndexResponse,
  GetTaskRequest,
  GetTaskResponse,
  IndexInfo,
  ListIndexesRequest,
  ListIndexesResponse,
  SubmitJobRequest,
  SubmitJobResponse,
} from "./gen/svc/backend/v1/backend.ts";
export type { ComputeServiceServer } from "./gen/svc/compute/v1/compute.ts";
export * as computeV1 from "./gen/svc/compute/v1/compute.ts";
// svc.compute.v1: ComputeService (ListShards).
export {
  ComputeServiceClient,
  ComputeServiceService,
  ListShardsRequest,
  ListShardsResponse,
  LoadedShard,
} from "./gen/svc/compute/v1/compute.ts";
export type { EndpointServiceServer } from "./gen/svc/endpoint/v1/endpoint.ts";
// svc.endpoint.v1: EndpointService (the application gateway); its messages share names with backend's, so they
// are reached through the namespace (`endpointV1.SubmitJobRequest`).
export * as endpointV1 from "./gen/svc/endpoint/v1/endpoint.ts";
export { EndpointServiceClient, EndpointServiceService } from "./gen/svc/endpoint/v1/endpoint.ts";
export type { KmsServiceServer } from "./gen/svc/kms/v1/kms.ts";
export * as kmsV1 from "./gen/svc/kms/v1/kms.ts";
// svc.kms.v1: KmsService (docs/kms.md).
export {
  DecryptRequest,
  DecryptResponse,
  EncryptRequest,
  EncryptResponse,
  GenerateKeyRequest,
  GenerateKeyResponse,
  GetPublicKeyRequest,
  GetPublicKeyResponse,
  KeyKind,
  KeyMetadata,
  KeyState,
  KmsServiceClient,
  KmsServiceService,
  keyKindFromJSON,
  keyKindToJSON,
  keyStateFromJSON,
  keyStateToJSON,
  ListKeysRequest,
  ListKeysResponse,
  RevokeKeyRequest,
  RevokeKeyResponse,
  RotateKeyRequest,
  RotateKeyResponse,
  SealRequest,
  SealResponse,
  SignRequest,
  SignResponse,
  UnsealRequest,
  UnsealResponse,
  VerifyRequest,
  VerifyResponse,
} from "./gen/svc/kms/v1/kms.ts";
export type { OrchestratorServiceServer } from "./gen/svc/orchestrator/v1/orchestrator.ts";
export * as orchestratorV1 from "./gen/svc/orchestrator/v1/orchestrator.ts";
// svc.orchestrator.v1: OrchestratorService (AddCompute / RemoveCompute / Heartbeat).
export {
  AddComputeRequest,
  AddComputeResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  OrchestratorServiceClient,
  OrchestratorServiceService,
  RemoveComputeRequest,
  RemoveComputeResponse,
} from "./gen/svc/orchestrator/v1/orchestrator.ts";
export type { ShaperServiceServer } from "./gen/svc/shaper/v1/shaper.ts";
export * as shaperV1 from "./gen/svc/shaper/v1/shaper.ts";
// svc.shaper.v1: ShaperService (keys and jobs).
export {
  IndexKey,
  LoadKeysRequest,
  LoadKeysResponse,
  RunJobRequest,
  RunJobResponse,
  ShaperServiceClient,
  ShaperServiceService,
  StatusRequest,
  StatusResponse,
} from "./gen/svc/shaper/v1/shaper.ts";
