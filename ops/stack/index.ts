export { loadStackConfig, parseStackConfig, type StackConfig } from "./src/config.ts";
export type { StackContext } from "./src/context.ts";
export { createContext } from "./src/context-factory.ts";
export { STACK_ERROR_CODES, StackAggregateError, StackError, type StackErrorCode } from "./src/errors.ts";
export { freePort } from "./src/free-port.ts";
export { createProgress, silentProgress } from "./src/progress.ts";
export { down, killAllNow, readEnvFile, type StackUp, status, up } from "./src/stack.ts";
export { ensureDebianPackages, ensureTool, type ToolName, type ToolOptions } from "./src/tools.ts";
export { VERSIONS } from "./src/versions.ts";
