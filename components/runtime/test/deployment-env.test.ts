import { describe, expect, test } from "bun:test";
import { SLOW_LEASE } from "@svc/election";
import { type DeploymentSettings, deploymentEnv, HA_COMPONENTS, parseReplicaConfig } from "../index.ts";
import { BACKEND_PROFILE_FOR_TEST } from "./support/profiles.ts";

const settings = (timings: DeploymentSettings["timings"]): DeploymentSettings => ({
  namespace: "svc",
  kubeconfig: "/tmp/kubeconfig",
  pgUrl: "postgres://u:p@127.0.0.1:5432/db",
  schema: "svc_components",
  s3: {
    endpoint: "http://127.0.0.1:9000",
    region: "us-east-1",
    accessKey: "ak",
    secretKey: "sk",
    bucket: "svc-audit",
    prefix: "components/",
  },
  authIssuer: "http://127.0.0.1:8082/realms/svc",
  componentsClientSecret: "components-secret",
  grpcAddresses: { orchestrator: ["127.0.0.1:1", "127.0.0.1:2"], shaper: ["127.0.0.1:3", "127.0.0.1:4"] },
  timings,
});

describe("deploymentEnv", () => {
  test("every HA component on k8s-lease in the namespace, with the model's schema; peers' addresses as lists", () => {
    for (const component of HA_COMPONENTS) {
      const env = deploymentEnv(component, settings("spec"));
      expect(env).toMatchObject({
        SVC_ELECTION_BACKEND: "k8s-lease",
        SVC_ELECTION_NAMESPACE: "svc",
        SVC_ELECTION_KUBECONFIG: "/tmp/kubeconfig",
        SVC_COMPONENTS_PG_SCHEMA: "svc_components",
      });
    }
    // Every component, endpoint included, accepts the realm's tokens and calls others with the service account's.
    for (const component of [...HA_COMPONENTS, "endpoint" as const]) {
      expect(deploymentEnv(component, settings("spec"))).toMatchObject({
        SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc",
        SVC_AUTH_CLIENT_SECRET: "components-secret",
      });
    }
    expect(deploymentEnv("compute", settings("spec")).SVC_COMPUTE_ORCHESTRATOR_ADDRESSES).toBe(
      "127.0.0.1:1,127.0.0.1:2",
    );
    expect(deploymentEnv("backend", settings("spec"))).toMatchObject({
      SVC_BACKEND_SHAPER_ADDRESSES: "127.0.0.1:3,127.0.0.1:4",
      SVC_COMPONENTS_S3_PREFIX: "components/",
      SVC_COMPONENTS_S3_BUCKET: "svc-audit",
    });
    const endpoint = deploymentEnv("endpoint", settings("spec"));
    expect(endpoint).toMatchObject({
      SVC_ENDPOINT_DISCOVERY: "k8s",
      SVC_ENDPOINT_NAMESPACE: "svc",
      SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc",
    });
    expect(Object.keys(endpoint).some((key) => key.startsWith("SVC_ELECTION_"))).toBe(false);
  });

  test("spec timings leave the profile's lease and default periods; fast ones set 3/2/0.5 and short ticks", () => {
    const spec = deploymentEnv("backend", { ...settings("spec") });
    expect(Object.keys(spec).filter((key) => key.endsWith("_SECONDS") || key.endsWith("_TICK_MS"))).toEqual([]);
    expect(parseReplicaConfig(BACKEND_PROFILE_FOR_TEST, { ...spec, SVC_POD_NAME: "backend-a" }, 1).timings).toEqual(
      SLOW_LEASE,
    );
    const fast = deploymentEnv("backend", settings("fast"));
    expect(parseReplicaConfig(BACKEND_PROFILE_FOR_TEST, { ...fast, SVC_POD_NAME: "backend-a" }, 1).timings).toEqual({
      leaseDurationSeconds: 3,
      renewDeadlineSeconds: 2,
      retryPeriodSeconds: 0.5,
    });
    expect(fast.SVC_BACKEND_TICK_MS).toBe("100");
  });
});
