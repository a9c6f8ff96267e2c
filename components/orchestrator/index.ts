export { type OrchestratorConfig, parseOrchestratorConfig } from "./src/config.ts";
export { startOrchestrator } from "./src/orchestrator.ts";
export { PlacementStore } from "./src/placement-store.ts";
export { ORCHESTRATOR } from "./src/profile.ts";
