export { ENDPOINT, ENDPOINT_READINESS_GATE } from "./src/profile.ts";
