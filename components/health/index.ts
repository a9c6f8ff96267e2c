export { grpcHealth } from "./src/grpc-health.ts";
export { type EndpointDiagnostics, healthRoutes } from "./src/health-routes.ts";
export { DEFAULT_HEALTH_PORT, type HealthServer, serveHealth } from "./src/health-server.ts";
export { type HealthRole, type HealthSnapshot, HealthState, type RoleSource } from "./src/health-state.ts";
