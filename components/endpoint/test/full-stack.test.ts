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
