import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Server } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { protocCompatible } from "./protoc-descriptors.ts";

/** The proto files of the services this server answers, relative to the @svc/proto package (the source of truth). */
const SERVED_PROTOS = ["audit/v2/audit.proto", "grpc/health/v1/health.proto"];
/** The reflection service's own proto, shipped in @grpc/reflection, so that it is listed too (as Go servers do). */
const REFLECTION_PROTO = "grpc/reflection/v1/reflection.proto";

/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`) over the served protos, so that `grpcurl -plaintext
 * … 127.0.0.1:50052 audit.v2.AuditService/list_events` and `grpcurl … list` work with no proto file at hand.
 * The descriptors are read from `proto/` at start (field names kept as written there).
 */
export function addReflection(server: Server): void {
  const root = dirname(fileURLToPath(import.meta.resolve("@svc/proto")));
  const reflectionRoot = join(dirname(fileURLToPath(import.meta.resolve("@grpc/reflection"))), "../proto");
  const definition = loadSync([...SERVED_PROTOS, REFLECTION_PROTO], {
    includeDirs: [root, reflectionRoot],
    keepCase: true,
  });
  protocCompatible(definition);
  new ReflectionService(definition).addToServer(server);
}
