import { afterEach, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { computeHarness } from "./support/compute-harness.ts";

// An object store that accepts connections and never answers (what a stalled MinIO does; the stack's cannot be
// stalled for one test): the serving compute replica gives a shard up after its load timeout and keeps its
// heartbeats, so the orchestrator never marks it lost for a hung request, and the shard is tried again.
let h: Awaited<ReturnType<typeof computeHarness>> | undefined;
let silent: TCPSocketListener | undefined;
afterEach(async () => {
  silent?.stop(true);
  silent = undefined;
  await h?.remove();
  h = undefined;
});

test("a shard whose object never arrives is given up after the load timeout; heartbeats go on and it is tried again", async () => {
  h = await computeHarness("compute-hang");
  const harness = h;
  const [shard] = await harness.seedIndex("idx-hang", 1);
  // Node timeout 1500 ms: a replica stuck in one load for longer would be marked lost.
  await harness.startOrchestrator(1_500);
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  silent = listener;
  const replica = harness.startCompute("compute-h", "", {
    SVC_COMPONENTS_S3_ENDPOINT: `http://127.0.0.1:${listener.port}`,
    SVC_COMPUTE_LOAD_TIMEOUT_MS: "500",
  });
  await replica.ready();

  const first = await replica.waitForLine((l) => l.event === "load-failed" && l.shard === shard, 15_000);
  expect(first.code).toBe("COMPUTE_SHARD_UNREADABLE");
  expect(String(first.err)).toContain("not loaded within 500 ms");
  // Tried again after more than the node timeout, the node still up: the heartbeats never stopped.
  const firstAt = Number(first.time);
  await replica.waitForLine(
    (l) => l.event === "load-failed" && l.shard === shard && Number(l.time) > firstAt + 2_000,
    15_000,
  );
  expect(await harness.nodeState("compute-h")).toBe("up");
  expect(replica.lines.some((l) => l.event === "unregistered")).toBe(false);
});
