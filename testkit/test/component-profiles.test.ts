/** Every component's HA profile against the spec's tables (Limits, States and transitions). */
import { expect, test } from "bun:test";
import { BACKEND } from "@svc/backend";
import { COMPUTE } from "@svc/compute";
import { type ComponentProfile, type ElectionBackend, parseElectionBackend, validateLeaseTimings } from "@svc/election";
import { ENDPOINT } from "@svc/endpoint";
import { KMS } from "@svc/kms";
import { ORCHESTRATOR } from "@svc/orchestrator";
import { SHAPER } from "@svc/shaper";

const HA: [ComponentProfile, [number, number, number], ElectionBackend[], number | undefined][] = [
  [BACKEND, [15, 10, 2], ["k8s-lease", "single-node"], 1],
  [SHAPER, [15, 10, 2], ["k8s-lease", ""], undefined],
  [ORCHESTRATOR, [6, 4, 1], ["k8s-lease", "postgres"], 1],
  [COMPUTE, [6, 4, 1], ["k8s-lease", ""], 1],
];

test.each(HA)("%# the HA profile of a component matches the spec", (profile, lease, backends, pdb) => {
  const election = profile.election;
  if (!election) throw new Error(`${profile.name} has no election`);
  const [leaseDurationSeconds, renewDeadlineSeconds, retryPeriodSeconds] = lease;
  expect(validateLeaseTimings(election.lease)).toEqual({
    leaseDurationSeconds,
    renewDeadlineSeconds,
    retryPeriodSeconds,
  });
  expect([...election.backends]).toEqual(backends);
  expect(parseElectionBackend(profile, undefined)).toBe(election.defaultBackend);
  expect(election.leaderLabel).toBe(`svc.ai/${profile.name}-leader`);
  expect(profile.pdbMinAvailable).toBe(pdb);
});

test("endpoint and the KMS have no election and keep the spec's gRPC ports", () => {
  expect([ENDPOINT.election, ENDPOINT.grpcPort]).toEqual([undefined, 50050]);
  expect([KMS.election, KMS.grpcPort]).toEqual([undefined, 50090]);
  expect(SHAPER.election?.defaultBackend).toBe("");
});
