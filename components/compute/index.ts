export { COMPUTE } from "./src/profile.ts";
