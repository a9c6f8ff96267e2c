export { parseEndpointConfig } from "./src/config.ts";
export { ENDPOINT, ENDPOINT_READINESS_GATE } from "./src/profile.ts";

/** endpoint's `main.ts`, for tests and benches that run it as a process. */
export const ENDPOINT_MAIN = new URL("./src/main.ts", import.meta.url).pathname;
