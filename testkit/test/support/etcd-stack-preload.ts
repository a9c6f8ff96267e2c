/**
 * The child process of cleanup-on-signal.test.ts, preloaded into the stack CLI:
 * `bun --preload <this file> ops/stack/src/cli.ts up etcd`.
 *
 * It prepares a private stack exactly as the global setup does (temporary state dir, free ports, the exit and
 * signal cleanup) and hands its state dir and ports to the CLI through the environment, so the CLI's `up etcd`
 * starts etcd in this very process, as the global setup's `up` does in the test runner's. (The CLI stands in for
 * `up(ctx, <etcd alone>)`, which needs `selectServices` from `@svc/stack`.)
 *
 * Prints one JSON line `{"stateDir"}` at once, one `{"etcdPid"}` when `up` is done, then waits for a signal.
 */
import { silentProgress, status } from "@svc/stack";
import { preparePrivateStack } from "../../src/private-stack.ts";

const stack = await preparePrivateStack({ progress: silentProgress });
Object.assign(process.env, stack.overrides);
console.log(JSON.stringify({ stateDir: stack.ctx.stateDir }));

let announced = false;
process.on("beforeExit", () => {
  if (announced) return;
  announced = true;
  setInterval(() => {}, 60_000);
  void status(stack.ctx).then((rows) => {
    console.log(JSON.stringify({ etcdPid: rows.find((row) => row.name === "etcd")?.pid ?? null }));
  });
});
