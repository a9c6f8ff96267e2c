import { describe, expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { parseReplicaConfig, RuntimeError } from "../index.ts";
import { CONFIG_TEST_AUTH_ENV } from "../testing.ts";
import {
  BACKEND_PROFILE_FOR_TEST,
  COMPUTE_PROFILE_FOR_TEST,
  ORCHESTRATOR_PROFILE_FOR_TEST,
} from "./support/profiles.ts";

const base = { SVC_POD_NAME: "orch-a", ...CONFIG_TEST_AUTH_ENV };

describe("parseReplicaConfig", () => {
  test("defaults: the component's backend and lease timings, health on 8080, the given gRPC port", () => {
    const config = parseReplicaConfig(ORCHESTRATOR_PROFILE_FOR_TEST, base, 50051);
    expect(config).toMatchObject({
      component: "orchestrator",
      pod: "orch-a",
      backend: "k8s-lease",
      lockName: "orchestrator-leader",
      timings: { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 },
      healthPort: 8080,
      grpcPort: 50051,
      labelPods: true,
    });
  });

  test('the pod name falls back to HOSTNAME; "" is a backend for compute (no HA)', () => {
    const config = parseReplicaConfig(
      COMPUTE_PROFILE_FOR_TEST,
      { ...CONFIG_TEST_AUTH_ENV, HOSTNAME: "compute-0", SVC_ELECTION_BACKEND: "" },
      1,
    );
    expect(config.pod).toBe("compute-0");
    expect(config.backend).toBe("");
    expect(config.labelPods).toBe(false);
  });

  const bad: [string, Record<string, string>, string][] = [
    ["a backend the component does not support", { SVC_ELECTION_BACKEND: "postgres" }, "SVC_ELECTION_BACKEND"],
    ['"" for backend, which needs an election', { SVC_ELECTION_BACKEND: "" }, "SVC_ELECTION_BACKEND"],
    [
      "a renew deadline not below the lease",
      { SVC_ELECTION_RENEW_DEADLINE_SECONDS: "20" },
      "SVC_ELECTION_RENEW_DEADLINE_SECONDS",
    ],
    ["a port that is not a number", { SVC_HEALTH_PORT: "http" }, "SVC_HEALTH_PORT"],
    ["a port out of range", { SVC_GRPC_PORT: "70000" }, "SVC_GRPC_PORT"],
    ["a bind address with a port", { SVC_HOST: "0.0.0.0:50051" }, "SVC_HOST"],
    ["a pod name with capitals", { SVC_POD_NAME: "Backend-A" }, "SVC_POD_NAME"],
    ["an unknown log level", { SVC_LOG_LEVEL: "loud" }, "SVC_LOG_LEVEL"],
  ];
  for (const [what, env, variable] of bad) {
    test(`refuses ${what}, naming ${variable}`, () => {
      const error = thrownBy(
        () => parseReplicaConfig(BACKEND_PROFILE_FOR_TEST, { SVC_POD_NAME: "backend-a", ...env }, 1),
        RuntimeError,
      );
      expect(error.code).toBe("RUNTIME_CONFIG_INVALID");
      expect(error.subject).toBe(variable);
      expect(error.message).toContain(variable);
    });
  }

  // Every component is behind @svc/auth and calls the others as the svc-components account (docs/components.md).
  const badAuth: [string, Record<string, string>, string][] = [
    ["no issuer", { SVC_AUTH_CLIENT_SECRET: "s" }, "SVC_AUTH_ISSUER"],
    ["no client secret", { SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc" }, "SVC_AUTH_CLIENT_SECRET"],
    [
      "a secret file that cannot be read",
      { SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc", SVC_AUTH_CLIENT_SECRET_FILE: "/nonexistent/secret" },
      "SVC_AUTH_CLIENT_SECRET_FILE",
    ],
  ];
  for (const [what, env, variable] of badAuth) {
    test(`refuses ${what}, naming ${variable} (auth)`, () => {
      const error = thrownBy(
        () => parseReplicaConfig(BACKEND_PROFILE_FOR_TEST, { SVC_POD_NAME: "backend-a", ...env }, 1),
        RuntimeError,
      );
      expect(error.code).toBe("RUNTIME_CONFIG_INVALID");
      expect(error.subject).toBe(variable);
      expect(error.message.startsWith(`${variable}: `)).toBe(true);
      expect(error.message.startsWith(`${variable}: ${variable}: `)).toBe(false);
    });
  }

  test("auth off (with its acknowledgement) needs no issuer and no client secret", () => {
    const config = parseReplicaConfig(
      BACKEND_PROFILE_FOR_TEST,
      { SVC_POD_NAME: "backend-a", SVC_AUTH_DISABLED: "true", SVC_AUTH_DISABLED_ACKNOWLEDGE: "test-environment-only" },
      1,
    );
    expect(config.auth.disabled).toBe(true);
    expect(config.serviceCredentials).toBeUndefined();
  });

  test("postgres needs SVC_ELECTION_PG_URL", () => {
    const error = thrownBy(
      () => parseReplicaConfig(ORCHESTRATOR_PROFILE_FOR_TEST, { ...base, SVC_ELECTION_BACKEND: "postgres" }, 1),
      RuntimeError,
    );
    expect(error.subject).toBe("SVC_ELECTION_PG_URL");
  });
});
