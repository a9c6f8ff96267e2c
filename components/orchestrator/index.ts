export { ORCHESTRATOR } from "./src/profile.ts";
