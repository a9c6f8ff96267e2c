import { afterAll, beforeAll, expect, test } from "bun:test";
import { credentials, Metadata } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import { callUnary } from "@svc/component-runtime";
import { EndpointServiceClient } from "@svc/proto";
import { fullStack, HA_COMPONENTS } from "./support/full-stack.ts";

// The deployment's expected state (spec: Limits) and application calls through endpoint, which finds each leader by
// its label; then a rolling restart of every pod, one at a time.
let stack: Awaited<ReturnType<typeof fullStack>>;
let client: EndpointServiceClient;
let metadata: () => Metadata;

beforeAll(async () => {
  stack = await fullStack("full");
  await stack.up();
  const token = await stack.issuer.token(["app"]);
  metadata = () => {
    const md = new Metadata();
    md.set("authorization", `Bearer ${token}`);
    md.set("x-tenant-id", "tenant-a");
    return md;
  };
  client = new EndpointServiceClient(stack.replica("endpoint-a").address, credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await stack?.remove();
});

const retryUnavailable = <T>(what: string, run: () => Promise<T>) =>
  waitFor(
    what,
    async () => {
      try {
        return await run();
      } catch (error) {
        if ((error as { code?: number }).code !== 14) throw error;
        return undefined;
      }
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );

test("after start: one labelled Pod per HA service and it holds the Lease; both endpoints Ready; calls reach every leader", async () => {
  const leaders = await stack.expectedState();
  expect(Object.keys(leaders).sort()).toEqual([...HA_COMPONENTS].sort());
  const created = await retryUnavailable("CreateIndex through endpoint", () =>
    callUnary(client.createIndex.bind(client), { name: "idx-full", shardCount: 2 }, metadata(), 10_000),
  );
  expect(created.shardIds).toEqual(["idx-full/0", "idx-full/1"]);
  // The orchestrator places the shards, the compute leader loads them; endpoint reaches it by its label.
  const listed = await waitFor(
    "shards on the compute leader",
    async () => {
      const answer = await callUnary(client.listShards.bind(client), {}, metadata(), 5_000).catch(() => undefined);
      return answer && answer.shards.length === 2 ? answer : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  expect(listed.nodeId).toBe(leaders.compute);
  const { taskId } = await callUnary(
    client.submitJob.bind(client),
    { indexName: "idx-full", input: "x" },
    metadata(),
    5_000,
  );
  const task = await waitFor(
    "the job done on the shaper leader",
    async () => {
      const answer = await callUnary(client.getTask.bind(client), { taskId }, metadata(), 5_000);
      return answer.state === "done" ? answer : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
  expect(task.result).toMatch(/^[0-9a-f]{64}$/);
});

test("kill -9 of the orchestrator, compute and shaper leaders in turn under a stream of calls: only UNAVAILABLE, inside each window; no job or shard lost", async () => {
  const calls: { at: number; code: number | undefined; taskId?: string }[] = [];
  let running = true;
  let n = 0;
  const stream = (async () => {
    while (running) {
      const at = performance.now();
      const submitted = callUnary(
        client.submitJob.bind(client),
        { indexName: "idx-full", input: `s-${n++}` },
        metadata(),
        3_000,
      )
        .then((answer) => calls.push({ at, code: undefined, taskId: answer.taskId }))
        .catch((error: { code?: number }) => calls.push({ at, code: error.code }));
      const listed = callUnary(client.listShards.bind(client), {}, metadata(), 3_000)
        .then(() => calls.push({ at, code: undefined }))
        .catch((error: { code?: number }) => calls.push({ at, code: error.code }));
      await Promise.all([submitted, listed]);
      await Bun.sleep(50);
    }
  })();
  const windows: [number, number][] = [];
  for (const component of ["orchestrator", "compute", "shaper"] as const) {
    const leaders = await stack.expectedState(30_000);
    const leader = stack.replica(leaders[component]);
    const killedAt = performance.now();
    leader.signal("SIGKILL");
    await leader.process.exited;
    await stack.expectedState(30_000);
    await waitFor(
      "a call after the new leader",
      async () => (calls.some((c) => c.at > killedAt && c.code === undefined) ? true : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 50,
      },
    );
    windows.push([killedAt - 3_100, performance.now()]);
    await stack.start(leader.pod).ready(30_000);
  }
  running = false;
  await stream;
  const failures = calls.filter((c) => c.code !== undefined);
  expect(failures.filter((c) => c.code !== 14)).toEqual([]);
  expect(failures.filter((c) => !windows.some(([from, to]) => c.at >= from && c.at <= to))).toEqual([]);
  // ListShards needs the compute leader: it did fail during the compute failover.
  const [computeFrom, computeTo] = windows[1] as [number, number];
  expect(failures.some((c) => c.at >= computeFrom && c.at <= computeTo)).toBe(true);
  // Every accepted job finishes, recorded once; every shard of the index is loaded on the compute leader.
  const accepted = calls.flatMap((c) => (c.taskId ? [c.taskId] : []));
  expect(accepted.length).toBeGreaterThan(0);
  await waitFor(
    "every accepted job done",
    async () => {
      const rows: { n: string }[] = await stack.sql.unsafe(
        `SELECT count(*) AS n FROM ${stack.schema}.task_queue t JOIN ${stack.schema}.job_results r ON r.task_id = t.id
          WHERE t.state = 'done' AND t.result = r.result AND t.id::text IN (SELECT jsonb_array_elements_text($1::text::jsonb))`,
        [JSON.stringify(accepted)],
      );
      return Number(rows[0]?.n) === accepted.length ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  const leaders = await stack.expectedState(30_000);
  await waitFor(
    "both shards on the compute leader",
    async () => {
      const rows: { loaded_node: string | null }[] = await stack.sql.unsafe(
        `SELECT loaded_node FROM ${stack.schema}.shards WHERE index_name = 'idx-full'`,
      );
      return rows.length === 2 && rows.every((r) => r.loaded_node === leaders.compute) ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
});

test("a rolling restart of every pod, one at a time, converges to one leader and one follower per HA service", async () => {
  for (const component of [...HA_COMPONENTS, "endpoint"]) {
    for (const pod of stack.pods(component)) {
      const replica = stack.replica(pod);
      replica.signal("SIGTERM");
      expect({ pod, exit: await replica.process.exited }).toEqual({ pod, exit: 0 });
      await stack.start(pod).ready(30_000);
    }
  }
  const leaders = await stack.expectedState(30_000);
  for (const component of HA_COMPONENTS) {
    const follower = stack.pods(component).find((pod) => pod !== leaders[component]) as string;
    expect((await stack.replica(follower).health("/health/whoami")).body).toMatchObject({
      role: "follower",
      holder: leaders[component],
    });
  }
  const listed = await retryUnavailable("ListShards after the restart", () =>
    callUnary(client.listShards.bind(client), {}, metadata(), 5_000),
  );
  expect(listed.nodeId).toBe(leaders.compute);
});
