export { type BackendConfig, parseBackendConfig } from "./src/config.ts";
export { BACKEND } from "./src/profile.ts";

/** The backend's `main.ts`, for tests and benches that run it as a process. */
export const BACKEND_MAIN = new URL("./src/main.ts", import.meta.url).pathname;
