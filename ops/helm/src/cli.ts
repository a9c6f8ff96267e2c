// `bun run ops/helm/src/cli.ts [helm arguments…]`: builds the pinned helm once into the cache (progress on stderr)
// and runs it with the arguments given; with none, prints the binary's path.
import { createProgress } from "@svc/stack";
import { ensureHelm } from "./helm-tool.ts";

const helm = await ensureHelm({ progress: createProgress() });
const args = process.argv.slice(2);
if (args.length === 0) {
  console.log(helm);
} else {
  const child = Bun.spawn([helm, ...args], { stdio: ["inherit", "inherit", "inherit"] });
  process.exit(await child.exited);
}
