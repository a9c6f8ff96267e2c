// What other packages' tests need to run the agent as its own process (queue-consumer's pipeline fault tests).
export { scrape } from "./records.ts";
export { type AgentProcess, spawnAgent } from "./spawn-agent.ts";
