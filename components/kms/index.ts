export { KMS, KMS_AUDIT } from "./src/profile.ts";
