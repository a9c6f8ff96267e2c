// `bun run bench:failover [flags]`: the leader-election failover bench. It lives with the module it measures
// (components/election/bench/failover.ts, which has the Kubernetes and election dependencies); this entry point
// keeps the bench commands together under bench/.
import { join } from "node:path";

const target = join(import.meta.dir, "../../../components/election/bench/failover.ts");
const child = Bun.spawn([process.execPath, "run", target, ...process.argv.slice(2)], {
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
});
process.exit(await child.exited);
