// `bun run bench:kms [flags]`: the KMS bench (encrypt/decrypt of 4 KiB over TLS with auth on, unseal at start). It
// lives with the module it measures (components/kms/bench/kms-bench.ts, which has the SDK and Keycloak test helpers);
// this entry point keeps the bench commands together under bench/.
import { runBenchAt } from "../run-bench-at.ts";

await runBenchAt("components/kms/bench/kms-bench.ts");
