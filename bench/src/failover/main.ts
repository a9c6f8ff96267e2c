// `bun run bench:failover [flags]`: the leader-election failover bench. It lives with the module it measures
// (components/election/bench/failover.ts, which has the Kubernetes and election dependencies); this entry point
// keeps the bench commands together under bench/.
// `bun run bench:failover -- --components [--kills N] [--timeout S] [--only backend,shaper,…]` runs the components'
// bench instead (components/endpoint/bench/failover-components.ts: the whole deployment, kill -9 of each component's
// leader — or of both replicas for the cold-standby modes compute-cold and shaper-cold — to the first successful
// application call through endpoint; issue 10).
import { runBenchAt } from "../run-bench-at.ts";

const args = process.argv.slice(2);
const components = args.includes("--components");
const rest = args
  .filter((arg) => arg !== "--components")
  .map((arg) => (components && arg === "--only" ? "--components" : arg));
await runBenchAt(
  components ? "components/endpoint/bench/failover-components.ts" : "components/election/bench/failover.ts",
  rest,
);
