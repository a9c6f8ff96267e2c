import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { createElector, type ElectionBackend, ElectionError, FAST_LEASE } from "../index.ts";

test("single-node always leads with term 1; stop ends it", async () => {
  const elector = createElector({ backend: "single-node", component: "backend", identity: "b-0", timings: FAST_LEASE });
  const types: string[] = [];
  elector.subscribe((event) => types.push(event.type));
  await elector.start();
  expect(elector.isServing()).toBe(true);
  expect(elector.snapshot()).toMatchObject({ role: "leader", holder: "b-0", term: 1 });
  await elector.stop();
  expect(elector.isServing()).toBe(false);
  expect(types).toEqual(["became-leader", "lost-leadership"]);
});

test('"" runs no election: every replica is active and serves', async () => {
  const elector = createElector({ backend: "", component: "compute", identity: "c-1", timings: FAST_LEASE });
  await elector.start();
  expect(elector.isServing()).toBe(true);
  expect(elector.snapshot()).toMatchObject({ role: "active", holder: undefined, term: undefined });
  expect(elector.currentTerm()).toBeUndefined();
});

test("bad timings are refused at creation, naming the field", () => {
  const error = thrownBy(
    () =>
      createElector({
        backend: "single-node",
        component: "backend",
        identity: "b-0",
        timings: { leaseDurationSeconds: 4, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 },
      }),
    ElectionError,
  );
  expect(`${error.code} ${error.subject}`).toBe("ELECTION_TIMINGS_INVALID backend.lease.renewDeadlineSeconds");
});

test("an unknown backend, or k8s-lease / postgres without their settings, is refused", () => {
  const make = (backend: string) => () =>
    createElector({ backend: backend as ElectionBackend, component: "shaper", identity: "s-0", timings: FAST_LEASE });
  expect(thrownBy(make("zookeeper"), ElectionError).code).toBe("ELECTION_BACKEND_UNSUPPORTED");
  expect(thrownBy(make("k8s-lease"), ElectionError).code).toBe("ELECTION_CONFIG_INVALID");
  expect(thrownBy(make("postgres"), ElectionError).code).toBe("ELECTION_CONFIG_INVALID");
});
