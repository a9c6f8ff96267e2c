// `bun run bench:api [flags]`: the audit API bench (issue 8). It lives with the module it measures
// (audit-api/bench/api-bench.ts, which has the API's dependencies); this entry point keeps the bench commands
// together under bench/.
import { join } from "node:path";

const target = join(import.meta.dir, "../../../audit-api/bench/api-bench.ts");
const child = Bun.spawn([process.execPath, "run", target, ...process.argv.slice(2)], {
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
});
process.exit(await child.exited);
