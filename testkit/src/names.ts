import { randomBytes } from "node:crypto";

/** `<prefix>-<12 hex>`: unique per call, so tests never share a resource and never clean up each other's. */
export function randomName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/** A Kafka topic of its own for one test. */
export const topicName = (purpose = "test") => randomName(`svc-test-${purpose}`);

/** A key prefix inside a shared Object Lock bucket (locked objects cannot be deleted, so tests never reuse one). */
export const bucketPrefix = (purpose = "test") => `${randomName(`test/${purpose}`)}/`;

/** A Keycloak user name (lower case; Keycloak lower-cases user names). */
export const realmUserName = (purpose = "user") => randomName(`t-${purpose}`);

/** A Lease or other Kubernetes object name: a DNS-1123 label. */
export const leaseName = (purpose = "lease") => randomName(`t-${purpose}`).slice(0, 63);
