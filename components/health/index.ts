export { type EndpointDiagnostics, healthRoutes } from "./src/health-routes.ts";
export { type HealthRole, type HealthSnapshot, HealthState } from "./src/health-state.ts";
