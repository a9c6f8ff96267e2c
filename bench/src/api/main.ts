// `bun run bench:api [flags]`: the audit API bench (issue 8). It lives with the module it measures
// (audit-api/bench/api-bench.ts, which has the API's dependencies); this entry point keeps the bench commands
// together under bench/.
import { runBenchAt } from "../run-bench-at.ts";

await runBenchAt("audit-api/bench/api-bench.ts");
