export { parseShaperConfig, type ShaperConfig } from "./src/config.ts";
export { SHAPER, SHAPER_TERMINATION_GRACE_SECONDS } from "./src/profile.ts";

/** The shaper's `main.ts`, for tests and benches that run it as a process. */
export const SHAPER_MAIN = new URL("./src/main.ts", import.meta.url).pathname;
