export { loadStackConfig, parseStackConfig, type StackConfig } from "./stack/src/config.ts";
export type { StackContext } from "./stack/src/context.ts";
export { createContext } from "./stack/src/context-factory.ts";
export { STACK_ERROR_CODES, StackError, type StackErrorCode } from "./stack/src/errors.ts";
export { freePort } from "./stack/src/free-port.ts";
export { createProgress, silentProgress } from "./stack/src/progress.ts";
export { down, killAllNow, readEnvFile, type StackUp, status, up } from "./stack/src/stack.ts";
export { VERSIONS } from "./stack/src/versions.ts";
export { type WaitOptions, waitFor } from "./stack/src/wait-for.ts";
