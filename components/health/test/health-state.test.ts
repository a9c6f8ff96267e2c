import { expect, test } from "bun:test";
import { HealthState } from "../index.ts";

test.each([
  // role, initialized, ready, pod-ready — the spec's "State behaviour" table
  ["leader", false, true, true],
  ["leader", true, true, true],
  ["follower", false, false, false],
  ["follower", true, false, true],
  ["active", false, false, false],
  ["active", true, true, true],
] as const)("%s (initialized=%p): ready=%p, pod-ready=%p", (role, initialized, ready, podReady) => {
  const state = new HealthState("backend", "backend-0", role);
  if (initialized) state.markInitialized();
  expect(state.isReady()).toBe(ready);
  expect(state.isPodReady()).toBe(podReady);
});

test("a role change records when it happened; setting the same role does not", () => {
  let now = new Date("2026-11-21T10:00:00Z");
  const state = new HealthState("shaper", "shaper-1", "follower", () => now);
  now = new Date("2026-11-21T10:00:05Z");
  state.setRole("leader");
  expect(state.snapshot()).toMatchObject({ role: "leader", since: "2026-11-21T10:00:05.000Z" });
  now = new Date("2026-11-21T10:00:09Z");
  state.setRole("leader");
  expect(state.snapshot().since).toBe("2026-11-21T10:00:05.000Z");
});
