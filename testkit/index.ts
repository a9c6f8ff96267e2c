export { waitFor } from "@svc/ops";
export { bucketPrefix, leaseName, randomName, realmUserName, topicName } from "./src/names.ts";
export { type SeededRealm, seedTestRealm } from "./src/seeded-realm.ts";
export { type StackEnv, stackEnv } from "./src/stack-env.ts";
