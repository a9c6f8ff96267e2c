import { afterEach, expect, test } from "bun:test";
import { type ServiceError, status } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import { leaderAmong, type ReplicaProcess } from "@svc/component-runtime/testing";
import { rejectionOf } from "@svc/testkit";
import { computeHarness } from "./support/compute-harness.ts";

// compute replicas (k8s-lease on the stack's kube-apiserver) and an orchestrator as real processes; shards are
// objects in the stack's MinIO, records in its PostgreSQL.
let h: Awaited<ReturnType<typeof computeHarness>> | undefined;
afterEach(async () => {
  await h?.remove();
  h = undefined;
});

/** `true` when every shard is reported loaded by `node`, else undefined (what waitFor polls for). */
const allOn = (loaded: Record<string, string | null>, shards: string[], node: string) =>
  shards.every((id) => loaded[id] === node) ? true : undefined;

test("the compute leader registers and loads its shards; after kill -9 they are reassigned and reloaded on the new leader", async () => {
  h = await computeHarness("compute");
  const harness = h;
  const shards = await harness.seedIndex("idx-c", 3);
  // A node timeout far beyond the test: the shards can only move because the new leader deregisters the old one.
  const orchestrator = await harness.startOrchestrator(60_000);
  await harness.createPods("compute-a", "compute-b");
  const pair = [harness.startCompute("compute-a", "k8s-lease"), harness.startCompute("compute-b", "k8s-lease")];
  await Promise.all(pair.map((r) => r.ready()));
  const leader = await leaderAmong(pair);
  const follower = pair.find((r) => r !== leader) as ReplicaProcess;

  await waitFor("shards loaded on the leader", async () => allOn(await harness.loaded(), shards, leader.pod), {
    timeoutMs: 15_000,
    intervalMs: 100,
  });
  const listed = await harness.listShards(leader);
  expect(listed.nodeId).toBe(leader.pod);
  expect(listed.shards.map((s) => s.shardId)).toEqual(shards);
  expect(listed.shards.every((s) => /^[0-9a-f]{64}$/.test(s.sha256) && s.sizeBytes > 0)).toBe(true);
  const refused = await rejectionOf(harness.listShards(follower), Error);
  expect((refused as ServiceError).code).toBe(status.UNAVAILABLE);
  // /metrics on the health port: the role, the duty done (shards loaded), the calls by method and code.
  const listShards = "/svc.compute.v1.ComputeService/ListShards";
  const calls = "svc_grpc_server_calls_total";
  expect(await leader.metric("svc_election_is_leader")).toBe(1);
  expect(await follower.metric("svc_election_is_leader")).toBe(0);
  expect(await leader.metric("svc_compute_shards_loaded_total")).toBe(3);
  expect(await follower.metric("svc_compute_shards_loaded_total")).toBe(0);
  expect(await leader.metric(calls, { method: listShards, code: "OK" })).toBe(1);
  expect(await follower.metric(calls, { method: listShards, code: "UNAVAILABLE" })).toBe(1);
  expect(await follower.metric(calls, { method: listShards, code: "OK" })).toBe(0);
  expect(await leader.metricsText()).toContain(`svc_grpc_server_call_duration_seconds_count{method="${listShards}"} 1`);
  expect(await orchestrator.metric("svc_orchestrator_shards_assigned_total")).toBe(3);
  await waitFor(
    "the leader labelled",
    async () => ((await harness.labelled()).join() === leader.pod ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 100,
    },
  );

  leader.signal("SIGKILL");
  await leader.process.exited;
  await waitFor("shards reloaded on the new leader", async () => allOn(await harness.loaded(), shards, follower.pod), {
    timeoutMs: 20_000,
    intervalMs: 100,
  });
  expect(Object.keys(await harness.loaded())).toEqual(shards);
  expect(await follower.waitForLine((l) => l.event === "took-over")).toMatchObject({ from: leader.pod, released: 3 });
  expect(await follower.metric("svc_election_is_leader")).toBe(1);
  expect(await follower.metric("svc_election_leadership_changes_total", { change: "became_leader" })).toBe(1);
  expect(await follower.metric("svc_compute_shards_loaded_total")).toBe(3);
  // the old leader's shards reassigned (RemoveCompute), none lost: the node timeout is beyond the test
  expect(await orchestrator.metric("svc_orchestrator_shards_assigned_total")).toBe(6);
  expect(await orchestrator.metric("svc_orchestrator_nodes_lost_total")).toBe(0);
  expect((await harness.listShards(follower)).shards.map((s) => s.shardId)).toEqual(shards);
  await waitFor(
    "the label moved",
    async () => ((await harness.labelled()).join() === follower.pod ? true : undefined),
    {
      timeoutMs: 10_000,
      intervalMs: 100,
    },
  );

  const restarted = harness.startCompute(leader.pod, "k8s-lease");
  await restarted.ready();
  expect((await restarted.health("/health/whoami")).body).toMatchObject({ role: "follower", holder: follower.pod });
});

test("with no election every replica serves; a shard whose object does not match its record is not loaded or reported", async () => {
  h = await computeHarness("compute-active");
  const harness = h;
  const shards = await harness.seedIndex("idx-bad", 2, [1]);
  await harness.startOrchestrator();
  const replica = harness.startCompute("compute-x", "");
  await replica.ready();
  const [good, bad] = shards as [string, string];
  await waitFor(
    "the good shard loaded",
    async () => ((await harness.loaded())[good] === "compute-x" ? true : undefined),
    {
      timeoutMs: 15_000,
      intervalMs: 100,
    },
  );
  const failed = await replica.waitForLine((l) => l.event === "load-failed" && l.shard === bad);
  expect(failed.code).toBe("COMPUTE_SHARD_CORRUPT");
  expect(
    await replica.metric("svc_compute_shard_load_failures_total", { code: "COMPUTE_SHARD_CORRUPT" }),
  ).toBeGreaterThan(0);
  expect(await replica.metric("svc_election_is_leader", { backend: "none" })).toBe(1); // active: serves
  expect((await harness.loaded())[bad]).toBeNull();
  expect((await harness.listShards(replica)).shards.map((s) => s.shardId)).toEqual([good]);
  expect((await replica.health("/health/ready")).status).toBe(200);
});
