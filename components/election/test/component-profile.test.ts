import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { type ComponentProfile, ElectionError, parseElectionBackend, SLOW_LEASE } from "../index.ts";

const withElection: ComponentProfile = {
  name: "backend",
  election: {
    backends: ["k8s-lease", "single-node"],
    defaultBackend: "k8s-lease",
    lease: SLOW_LEASE,
    leaderLabel: "svc.ai/backend-leader",
  },
  leaderDuties: [],
};
const withoutElection: ComponentProfile = { name: "endpoint", leaderDuties: [] };

const codeOf = (run: () => unknown) => {
  const error = thrownBy(run, ElectionError);
  return `${error.code} ${error.subject}`;
};

test("a supported backend parses; none given means the component's default", () => {
  expect(parseElectionBackend(withElection, "single-node")).toBe("single-node");
  expect(parseElectionBackend(withElection, undefined)).toBe("k8s-lease");
  expect(parseElectionBackend(withoutElection, undefined)).toBe("");
});

test("a backend the component does not support is refused naming the key", () => {
  expect(codeOf(() => parseElectionBackend(withElection, "postgres"))).toBe(
    "ELECTION_BACKEND_UNSUPPORTED backend.election.backend",
  );
  expect(codeOf(() => parseElectionBackend(withoutElection, "k8s-lease"))).toBe(
    "ELECTION_BACKEND_UNSUPPORTED endpoint.election.backend",
  );
});
