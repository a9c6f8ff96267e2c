export { BACKEND } from "./src/profile.ts";
