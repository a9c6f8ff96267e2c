import { afterEach, expect, test } from "bun:test";
import { waitFor } from "@svc/common";
import { leaderAmong, type ReplicaProcess } from "@svc/component-runtime/testing";
import { backendHarness } from "./support/backend-harness.ts";

// backend and shaper as real processes (k8s-lease on the stack's apiserver, PostgreSQL task_queue, MinIO shards).
let h: Awaited<ReturnType<typeof backendHarness>> | undefined;
afterEach(async () => {
  await h?.remove();
  h = undefined;
});

async function submit(api: { submitJob(i: string, s: string): Promise<{ taskId: string }> }, index: string, n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await api.submitJob(index, `input-${i}`)).taskId);
  return ids;
}

function expectExactlyOnce(
  results: Map<string, { task: string | null; recorded: string[] }>,
  ranCounts: Record<string, number>,
) {
  for (const [id, { task, recorded }] of results) {
    expect({ id, recorded: recorded.length }).toEqual({ id, recorded: 1 });
    expect(task).toBe(recorded[0] ?? "missing");
    expect(ranCounts[id] ?? 0).toBeLessThanOrEqual(1);
  }
}

test("shaper failover with jobs in flight: every job is replayed and recorded exactly once; keys reloaded into the new leader", async () => {
  h = await backendHarness("shaper-fo");
  const harness = h;
  await harness.createPods("shaper", "shaper-a", "shaper-b");
  const shapers = [harness.startShaper("shaper-a", "k8s-lease"), harness.startShaper("shaper-b", "k8s-lease")];
  await Promise.all(shapers.map((s) => s.ready()));
  const leader = await leaderAmong(shapers);
  const follower = shapers.find((s) => s !== leader) as ReplicaProcess;
  const backend = harness.startBackend(
    "backend-a",
    "single-node",
    shapers.map((s) => s.address),
  );
  await backend.ready();
  await backend.waitForLine((l) => l.event === "recovered");
  const api = harness.backendClient(backend);
  expect((await api.createIndex("idx-jobs", 2)).shardIds).toEqual(["idx-jobs/0", "idx-jobs/1"]);
  const ids = await submit(api, "idx-jobs", 12);

  await waitFor("two jobs done", async () => ((await harness.doneCount(ids)) >= 2 ? true : undefined), {
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  leader.signal("SIGKILL");
  await leader.process.exited;
  await waitFor("every job done", async () => ((await harness.doneCount(ids)) === ids.length ? true : undefined), {
    timeoutMs: 40_000,
    intervalMs: 100,
  });
  expectExactlyOnce(await harness.results(ids), harness.ranCounts(ids));
  // Jobs were replayed: those in flight or queued at the kill went out again.
  const attempts = await Promise.all(ids.map(async (id) => (await api.getTask(id)).attempts));
  expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
  // The new leader was given the keys by the backend, and holds them.
  await backend.waitForLine((l) => l.event === "keys-reloaded" && l.shaper === follower.pod);
  expect(await harness.shaperStatus(follower)).toMatchObject({ pod: follower.pod, keyCount: 1 });
  expect((await api.getTask(ids[0] as string)).state).toBe("done");
  // /metrics: the new shaper leader was given the keys and ran jobs; each job the backend queued again after its
  // shaper call failed is counted as replayed (every task here is a shaper job).
  expect(await follower.metric("svc_election_is_leader")).toBe(1);
  expect(await follower.metric("svc_shaper_keys_loaded_total")).toBeGreaterThanOrEqual(1);
  expect(await follower.metric("svc_shaper_jobs_finished_total", { outcome: "ran" })).toBeGreaterThanOrEqual(1);
  const runJob = { method: "/svc.shaper.v1.ShaperService/RunJob", code: "OK" };
  expect(await follower.metric("svc_grpc_server_calls_total", runJob)).toBeGreaterThanOrEqual(1);
  const requeuedAfterFailure = backend.lines.filter((l) => l.msg === "task failed; queued again").length;
  expect(await backend.metric("svc_backend_jobs_replayed_total")).toBe(requeuedAfterFailure);
  expect(await backend.metric("svc_backend_tasks_recovered_total")).toBe(0);

  const restarted = harness.startShaper(leader.pod, "k8s-lease");
  await restarted.ready();
  expect((await restarted.health("/health/whoami")).body).toMatchObject({ role: "follower", holder: follower.pod });
});

test("backend kill -9 with jobs running: the new leader's RecoverTasks() replays them, each recorded exactly once", async () => {
  h = await backendHarness("backend-fo");
  const harness = h;
  const shaper = harness.startShaper("shaper-x", "");
  await shaper.ready();
  await harness.createPods("backend", "backend-a", "backend-b");
  const pair = [
    harness.startBackend("backend-a", "k8s-lease", [shaper.address]),
    harness.startBackend("backend-b", "k8s-lease", [shaper.address]),
  ];
  await Promise.all(pair.map((b) => b.ready()));
  const leader = await leaderAmong(pair);
  const follower = pair.find((b) => b !== leader) as ReplicaProcess;
  await leader.waitForLine((l) => l.event === "recovered");
  const api = harness.backendClient(leader);
  await api.createIndex("idx-b", 1);
  const ids = await submit(api, "idx-b", 9);
  await waitFor("two jobs done", async () => ((await harness.doneCount(ids)) >= 2 ? true : undefined), {
    timeoutMs: 15_000,
    intervalMs: 50,
  });

  leader.signal("SIGKILL");
  await leader.process.exited;
  const recovered = await follower.waitForLine((l) => l.event === "recovered", 15_000);
  expect(typeof recovered.requeued).toBe("number");
  expect(await follower.metric("svc_backend_tasks_recovered_total")).toBe(recovered.requeued as number);
  expect(await follower.metric("svc_election_is_leader")).toBe(1);
  await waitFor("every job done", async () => ((await harness.doneCount(ids)) === ids.length ? true : undefined), {
    timeoutMs: 40_000,
    intervalMs: 100,
  });
  expectExactlyOnce(await harness.results(ids), harness.ranCounts(ids));
  expect((await harness.backendClient(follower).listIndexes()).indexes.map((i) => i.name)).toEqual(["idx-b"]);
});

test("graceful stop of the shaper leader (SIGTERM, as preStop): the Lease goes first, the follower takes office, no job is lost or doubled", async () => {
  h = await backendHarness("shaper-stop");
  const harness = h;
  await harness.createPods("shaper", "shaper-a", "shaper-b");
  const shapers = [harness.startShaper("shaper-a", "k8s-lease"), harness.startShaper("shaper-b", "k8s-lease")];
  await Promise.all(shapers.map((s) => s.ready()));
  const leader = await leaderAmong(shapers);
  const follower = shapers.find((s) => s !== leader) as ReplicaProcess;
  const backend = harness.startBackend(
    "backend-a",
    "single-node",
    shapers.map((s) => s.address),
  );
  await backend.ready();
  await backend.waitForLine((l) => l.event === "recovered");
  const api = harness.backendClient(backend);
  await api.createIndex("idx-stop", 1);
  const ids = await submit(api, "idx-stop", 8);
  await waitFor("a job done", async () => ((await harness.doneCount(ids)) >= 1 ? true : undefined), {
    timeoutMs: 15_000,
    intervalMs: 50,
  });

  leader.signal("SIGTERM");
  expect(await leader.process.exited).toBe(0);
  const released = leader.lines.find((l) => l.event === "lost-leadership");
  const stopped = leader.lines.find((l) => l.event === "stopped");
  expect(released?.reason).toBe("released on shutdown");
  // The Lease was released before the rest of the shutdown (gRPC drain, clients closed).
  expect((released?.time as number) <= (stopped?.time as number)).toBe(true);
  await follower.waitForLine((l) => l.event === "in-office");
  await waitFor("every job done", async () => ((await harness.doneCount(ids)) === ids.length ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  expectExactlyOnce(await harness.results(ids), harness.ranCounts(ids));
  expect(await harness.shaperStatus(follower)).toMatchObject({ keyCount: 1 });
});
