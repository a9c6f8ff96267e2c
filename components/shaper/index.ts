export { SHAPER, SHAPER_TERMINATION_GRACE_SECONDS } from "./src/profile.ts";
