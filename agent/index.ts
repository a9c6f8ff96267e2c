export { type Agent, type AgentState, type StartAgentOptions, startAgent } from "./src/agent.ts";
export { AgentMetrics } from "./src/agent-metrics.ts";
export { type Checkpoint, readCheckpoint } from "./src/checkpoint-file.ts";
export {
  type ClassifiedLine,
  classifyLine,
  DEAD_LETTER_REASONS,
  type DeadLetter,
  type DeadLetterReason,
  REDACTED,
} from "./src/classify-line.ts";
export { type AgentConfig, AgentEnvSchema, parseAgentConfig } from "./src/config.ts";
export { AGENT_ERROR_CODES, AgentError, type AgentErrorCode } from "./src/errors.ts";
export { LineSplitter, type SourceLine } from "./src/split-lines.ts";
