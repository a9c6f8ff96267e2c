export { type ComputeConfig, parseComputeConfig } from "./src/config.ts";
export { COMPUTE_ERROR_CODES, ComputeError, type ComputeErrorCode } from "./src/errors.ts";
export { COMPUTE } from "./src/profile.ts";

/** Compute's `main.ts`, for tests and benches that run it as a process. */
export const COMPUTE_MAIN = new URL("./src/main.ts", import.meta.url).pathname;
