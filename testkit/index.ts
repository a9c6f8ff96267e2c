export { waitFor } from "@svc/common";
// Programs tests run beside the stack (grpcurl, faketime, the client-go peer), from the stack's own installers.
export { ensureTool, freePortSync } from "@svc/stack";
export {
  CLEANUP_SIGNALS,
  type CleanupSignal,
  cleanupOnSignal,
  type SignalCleanup,
  type SignalCleanupOptions,
} from "./src/cleanup-on-signal.ts";
export { describeWithServers, serversAllowed } from "./src/describe-with-servers.ts";
export { rejectionOf, thrownBy } from "./src/errors.ts";
export { hangUpListener } from "./src/hang-up-listener.ts";
export { createTestNamespace, type TestNamespace } from "./src/kube-namespace.ts";
export { mutatedLines } from "./src/mutated-lines.ts";
export { bucketPrefix, leaseName, randomName, realmUserName, topicName } from "./src/names.ts";
export { type PrivateServers, startPrivateServers } from "./src/private-servers.ts";
export { type PrivateStack, preparePrivateStack } from "./src/private-stack.ts";
export { seededRandom } from "./src/seeded-random.ts";
export { type SeededRealm, seedTestRealm } from "./src/seeded-realm.ts";
export { serviceAccountKubeConfig } from "./src/service-account-config.ts";
export { type StackEnv, stackEnv, stackS3Settings } from "./src/stack-env.ts";
export { packageImports } from "./src/static-imports.ts";
export { inTempDir, type TempDir, tempDir } from "./src/temp-dir.ts";
