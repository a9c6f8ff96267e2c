// Component failover bench (issue 10 goals; not a test): the whole deployment on the stack (two replicas of each HA
// component on k8s-lease with the spec's timings, two endpoints finding leaders by label), then per component N
// kills of its leader (kill -9). Measured: time from the kill to the first successful application call through
// endpoint that needs that component's new leader:
//   backend      SubmitJob answered
//   shaper       a job submitted after the kill reported done (the new shaper leader holds the keys again)
//   orchestrator a new index's shard placed and loaded (ListShards shows it)
//   compute      ListShards answered with every shard (reassigned and reloaded from object storage)
// The killed pod is restarted (it rejoins as follower) and the expected state awaited before the next kill.
//
//   bun run components/endpoint/bench/failover-components.ts [--kills N] [--components backend,shaper,...]
import { parseArgs } from "node:util";
import { credentials, Metadata } from "@grpc/grpc-js";
import { callUnary } from "@svc/component-runtime";
import { EndpointServiceClient } from "@svc/proto";
import { fullStack, HA_COMPONENTS, type HaComponent } from "../test/support/full-stack.ts";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "20" },
    components: { type: "string", default: HA_COMPONENTS.join(",") },
  },
});
const kills = Number(values.kills);
const components = (values.components ?? "").split(",") as HaComponent[];
const GOALS: Record<HaComponent, number> = { orchestrator: 7, compute: 7, backend: 17, shaper: 17 };

const stack = await fullStack("bench-fo", { specTimings: true });
const samples: Record<string, number[]> = {};
try {
  await stack.up();
  const token = await stack.issuer.token(["app"]);
  const md = () => {
    const m = new Metadata();
    m.set("authorization", `Bearer ${token}`);
    m.set("x-tenant-id", "tenant-a");
    return m;
  };
  const client = new EndpointServiceClient(stack.replica("endpoint-a").address, credentials.createInsecure());
  const api = {
    createIndex: (name: string) => callUnary(client.createIndex.bind(client), { name, shardCount: 1 }, md(), 10_000),
    submitJob: (input: string) => callUnary(client.submitJob.bind(client), { indexName: "bench", input }, md(), 5_000),
    getTask: (taskId: string) => callUnary(client.getTask.bind(client), { taskId }, md(), 5_000),
    listShards: () => callUnary(client.listShards.bind(client), {}, md(), 5_000),
  };
  /** Polls `probe` every 50 ms until it resolves truthy; answers the time it took from `since`. */
  const until = async (since: number, probe: () => Promise<unknown>, timeoutMs = 180_000) => {
    while (performance.now() - since < timeoutMs) {
      if (await probe().catch(() => false)) return (performance.now() - since) / 1000;
      await Bun.sleep(50);
    }
    throw new Error("timed out");
  };
  await stack.expectedState(120_000);
  await until(performance.now(), () => api.createIndex("bench"));
  let shardTotal = 1;
  await until(performance.now(), async () => (await api.listShards()).shards.length === shardTotal);
  let round = 0;
  for (const component of components) {
    samples[component] = [];
    for (let k = 0; k < kills; k++) {
      const leaders = await stack.expectedState(120_000);
      const leader = stack.replica(leaders[component]);
      const killedAt = performance.now();
      leader.signal("SIGKILL");
      let seconds: number;
      switch (component) {
        case "backend":
          seconds = await until(killedAt, () => api.submitJob(`b-${round++}`));
          break;
        case "shaper": {
          let taskId: string | undefined;
          seconds = await until(killedAt, async () => {
            taskId ??= (await api.submitJob(`s-${round++}`)).taskId;
            return (await api.getTask(taskId)).state === "done";
          });
          break;
        }
        case "orchestrator": {
          const name = `bench-o${round++}`;
          let created = false;
          seconds = await until(killedAt, async () => {
            if (!created) created = Boolean(await api.createIndex(name));
            return (await api.listShards()).shards.some((s) => s.shardId === `${name}/0`);
          });
          shardTotal += 1;
          break;
        }
        case "compute":
          seconds = await until(killedAt, async () => (await api.listShards()).shards.length === shardTotal);
          break;
      }
      samples[component].push(seconds);
      console.log(JSON.stringify({ component, kill: k + 1, killed: leader.pod, seconds: Number(seconds.toFixed(2)) }));
      await leader.process.exited;
      await stack.start(leader.pod).ready(60_000);
    }
  }
  client.close();
} finally {
  await stack.remove();
}

const pct = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? NaN;
console.log("\n| component    | kills | kill → first successful call p50 / max s | goal ≤ s |");
console.log("| ------------ | ----- | ---------------------------------------- | -------- |");
for (const component of components) {
  const sorted = [...(samples[component] ?? [])].sort((a, b) => a - b);
  const row = `${pct(sorted, 0.5).toFixed(2)} / ${(sorted.at(-1) ?? NaN).toFixed(2)}`;
  console.log(
    `| ${component.padEnd(12)} | ${String(sorted.length).padEnd(5)} | ${row.padEnd(40)} | ${String(GOALS[component]).padEnd(8)} |`,
  );
}
