export { bucketPrefix, leaseName, randomName, realmUserName, topicName } from "./src/names.ts";
export { type StackEnv, stackEnv } from "./src/stack-env.ts";
export { waitFor } from "@svc/ops";
