import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { type ServiceError, status } from "@grpc/grpc-js";
import { waitFor } from "@svc/common";
import {
  type ComponentAuthFixture,
  componentAuthFixture,
  leaderAmong,
  type ReplicaProcess,
} from "@svc/component-runtime/testing";
import { rejectionOf } from "@svc/testkit";
import { orchestratorHarness } from "./support/orchestrator-harness.ts";

// Two orchestrator replicas as real processes on the stack's PostgreSQL (postgres election: outside a cluster).
// Each test has its own schema and lease table.
// Each test has its own schema and lease table; the file has one realm (the replicas' service auth).
let auth: ComponentAuthFixture;
let h: ReturnType<typeof orchestratorHarness>;
beforeAll(async () => {
  auth = await componentAuthFixture("orch");
});
afterAll(() => auth.remove());
beforeEach(() => {
  h = orchestratorHarness("orch", auth);
});
afterEach(() => h.remove());

async function pair(): Promise<{ leader: ReplicaProcess; follower: ReplicaProcess }> {
  const replicas = [h.start("orch-a"), h.start("orch-b")];
  await Promise.all(replicas.map((r) => r.ready()));
  const leader = await leaderAmong(replicas);
  const follower = replicas.find((r) => r !== leader) as ReplicaProcess;
  await leader.waitForLine((l) => l.event === "recovered");
  return { leader, follower };
}

const codeOf = (error: unknown) => (error as ServiceError).code;

test("one leader; the follower refuses AddCompute with UNAVAILABLE; a silent node is lost and its shards move", async () => {
  const shards = await h.seedIndex("idx-sup", 4);
  const { leader, follower } = await pair();
  expect(codeOf(await rejectionOf(h.client(follower).addCompute("node-1"), Error))).toBe(status.UNAVAILABLE);
  // Only the svc-components service account may call a component: no token, or an application user's, is refused.
  const { tenantId } = auth.realm.seed;
  const appToken = await auth.userToken("app");
  const anonymous = h.client(leader, { options: {}, tenantId });
  expect(codeOf(await rejectionOf(anonymous.addCompute("node-x"), Error))).toBe(status.UNAUTHENTICATED);
  const appUser = h.client(leader, { options: {}, token: appToken, tenantId });
  expect(codeOf(await rejectionOf(appUser.addCompute("node-x"), Error))).toBe(status.PERMISSION_DENIED);

  const api = h.client(leader);
  const first = await api.addCompute("node-1", 2);
  const second = await api.addCompute("node-2", 2);
  const third = await api.addCompute("node-3");
  expect(first.accepted).toBe(true);
  expect([...first.assignedShards, ...second.assignedShards].sort()).toEqual(shards);
  expect(second.assignedShards.length).toBe(2);
  expect(third.assignedShards).toEqual([]);

  // node-1 and node-3 keep heart-beating; node-2 goes silent past the node timeout.
  const moved = await waitFor(
    "node-2 lost and its shards on node-3",
    async () => {
      await api.heartbeat("node-1", first.assignedShards);
      const beat = await api.heartbeat("node-3");
      return beat.assignedShards.length === 2 ? beat.assignedShards : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 200 },
  );
  expect(moved).toEqual(second.assignedShards);
  expect(await h.nodeStates()).toEqual({ "node-1": "up", "node-2": "lost", "node-3": "up" });
  // Placement is sticky: nothing moved from the healthy node-1.
  expect((await api.heartbeat("node-1", first.assignedShards)).assignedShards).toEqual(first.assignedShards);
  // The lost node is told to register again.
  expect((await api.heartbeat("node-2")).registered).toBe(false);
  const removed = await api.removeCompute("node-1");
  expect(removed).toEqual({ removed: true, releasedShards: first.assignedShards });
  expect(Object.values(await h.placement())).toEqual(["node-3", "node-3", "node-3", "node-3"]);
  // /metrics: supervision counted the lost node; reconciliation the shards it placed (2 + 2), moved from the lost
  // node-2 (2) and from the removed node-1 (2); the follower counted the AddCompute it refused.
  expect(await leader.metric("svc_orchestrator_nodes_lost_total")).toBe(1);
  expect(await leader.metric("svc_orchestrator_shards_assigned_total")).toBe(8);
  expect(await follower.metric("svc_orchestrator_nodes_lost_total")).toBe(0);
  const addCompute = "/svc.orchestrator.v1.OrchestratorService/AddCompute";
  expect(await follower.metric("svc_grpc_server_calls_total", { method: addCompute, code: "UNAVAILABLE" })).toBe(1);
  expect(await leader.metric("svc_election_is_leader")).toBe(1);
  expect(await follower.metric("svc_election_is_leader")).toBe(0);
});

test("a client secret the realm refuses stops the start: exit 1 with AUTH_SERVICE_CREDENTIALS_REJECTED, never ready", async () => {
  const replica = h.start("orch-x", { SVC_AUTH_CLIENT_SECRET: "not-the-realms-secret" });
  expect(await replica.process.exited).toBe(1);
  const fatal = await waitFor(
    "the did-not-start line",
    async () => replica.lines.find((l) => l.msg === "orchestrator did not start"),
    { timeoutMs: 5_000, intervalMs: 20 },
  );
  expect(JSON.stringify(fatal.err)).toContain("AUTH_SERVICE_CREDENTIALS_REJECTED");
  expect(replica.lines.some((l) => l.event === "ready")).toBe(false);
});

test("kill -9 of the leader: the follower takes office with a newer term, keeps the placement, loses no node", async () => {
  await h.seedIndex("idx-kill", 2);
  const { leader, follower } = await pair();
  await h.client(leader).addCompute("node-k");
  const before = await h.placement();
  const term = await h.fenceTerm();
  // node-k heart-beats throughout, to whichever replica serves.
  const both = [h.client(leader), h.client(follower)];
  let beating = true;
  const beats = (async () => {
    while (beating) {
      await Promise.allSettled(both.map((c) => c.heartbeat("node-k")));
      await Bun.sleep(200);
    }
  })();

  leader.signal("SIGKILL");
  await leader.process.exited;
  const api = h.client(follower);
  // Calls fail with UNAVAILABLE until the new leader is in office, then succeed.
  const beat = await waitFor(
    "a heartbeat through the new leader",
    async () => {
      try {
        return await api.heartbeat("node-k", []);
      } catch (error) {
        expect(codeOf(error)).toBe(status.UNAVAILABLE);
        return undefined;
      }
    },
    { timeoutMs: 15_000, intervalMs: 100 },
  );
  expect(beat.registered).toBe(true);
  expect(beat.term).toBeGreaterThan(term ?? 0);
  expect(await h.fenceTerm()).toBe(beat.term);
  expect(await h.placement()).toEqual(before);
  expect(Object.entries(before).filter(([id, node]) => id.startsWith("idx-kill/") && node === "node-k").length).toBe(2);
  beating = false;
  await beats;
  expect((await h.nodeStates())["node-k"]).toBe("up");

  const restarted = h.start(leader.pod);
  await restarted.ready();
  expect((await restarted.health("/health/whoami")).body).toMatchObject({ role: "follower", holder: follower.pod });
  expect(codeOf(await rejectionOf(h.client(restarted).heartbeat("node-k"), Error))).toBe(status.UNAVAILABLE);
});

test("a deposed leader (SIGSTOP past its lease, then SIGCONT) cannot complete a write and exits", async () => {
  await h.seedIndex("idx-stop", 1);
  const { leader, follower } = await pair();
  await leader.waitForLine((l) => l.event === "tick-written");
  leader.signal("SIGSTOP");
  const took = await follower.waitForLine((l) => l.event === "recovered", 15_000);
  // The successor writes under its term.
  await follower.waitForLine((l) => l.event === "tick-written" && l.term === took.term);
  leader.signal("SIGCONT");
  expect(await leader.process.exited).toBe(1);
  const oldTerm = leader.lines.find((l) => l.event === "recovered")?.term;
  expect(oldTerm).toBeLessThan(took.term as number);
  const lateWrites = leader.lines.filter((l) => l.event === "tick-written" && (l.at ?? 0) >= (took.at ?? 0));
  expect(lateWrites).toEqual([]);
  expect(await h.fenceTerm()).toBe(took.term);
});
