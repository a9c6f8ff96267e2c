export { type OrchestratorConfig, parseOrchestratorConfig } from "./src/config.ts";
export { startOrchestrator } from "./src/orchestrator.ts";
export { PlacementStore } from "./src/placement-store.ts";
export { ORCHESTRATOR } from "./src/profile.ts";

/** The orchestrator's `main.ts`, for tests and benches that run it as a process. */
export const ORCHESTRATOR_MAIN = new URL("./src/main.ts", import.meta.url).pathname;
