// `bun run bench:kms [flags]`: the KMS bench (encrypt/decrypt of 4 KiB over TLS with auth on, unseal at start). It
// lives with the module it measures (components/kms/bench/kms-bench.ts, which has the SDK and Keycloak test helpers);
// this entry point keeps the bench commands together under bench/.
import { join } from "node:path";

const target = join(import.meta.dir, "../../../components/kms/bench/kms-bench.ts");
const child = Bun.spawn([process.execPath, "run", target, ...process.argv.slice(2)], {
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
});
process.exit(await child.exited);
