export { waitFor } from "@svc/common";
export { rejectionOf, thrownBy } from "./src/errors.ts";
export { hangUpListener } from "./src/hang-up-listener.ts";
export { createTestNamespace, type TestNamespace } from "./src/kube-namespace.ts";
export { bucketPrefix, leaseName, randomName, realmUserName, topicName } from "./src/names.ts";
export { type SeededRealm, seedTestRealm } from "./src/seeded-realm.ts";
export { type StackEnv, stackEnv } from "./src/stack-env.ts";
