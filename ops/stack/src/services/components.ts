import { mkdirSync } from "node:fs";
import { deploymentEnv } from "@svc/component-runtime/deployment";
import { endpointAuditLog, servicesDir } from "../audit-files.ts";
import { answers200, bunProgram, dropPrefixes } from "../bun-program.ts";
import type { ServiceGroup, StackContext, StackService } from "../context.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";
import { ensureReplicaPod } from "./component-pods.ts";
import {
  grpcAddresses,
  REPLICA_SUFFIXES,
  replicaPorts,
  SERVICE_COMPONENTS,
  type ServiceComponent,
} from "./component-ports.ts";
import { awaitExpectedState, describeRole, replicaHealthUrl, replicaRole } from "./component-roles.ts";
import { keycloak } from "./keycloak.ts";
import { kubeconfigPath } from "./kube-apiserver.ts";
import { minio } from "./minio.ts";
import { postgres } from "./postgres.ts";

/** The issuer endpoint trusts: the stack's Keycloak realm `services.realm` (seeded by `ops/dev up`). */
export const servicesIssuer = (ctx: StackContext) =>
  `${keycloak.exports(ctx).SVC_STACK_IDP_URL}/realms/${ctx.config.services.realm}`;

/** The whole environment of one replica: the deployment's (shared with the tests' full stack) and its own. */
function replicaEnv(ctx: StackContext, component: ServiceComponent, index: number): Record<string, string> {
  const pod = `${component}-${REPLICA_SUFFIXES[index]}`;
  const ports = replicaPorts(ctx.config, component, index);
  const s3 = minio.exports(ctx);
  const { namespace, schema, bucket, key_prefix } = ctx.config.services;
  const env: Record<string, string> = {
    ...deploymentEnv(component, {
      namespace,
      kubeconfig: kubeconfigPath(ctx),
      pgUrl: postgres.exports(ctx).SVC_STACK_PG_URL ?? "",
      schema,
      s3: {
        endpoint: s3.SVC_STACK_S3_ENDPOINT ?? "",
        region: s3.SVC_STACK_S3_REGION ?? "",
        accessKey: s3.SVC_STACK_S3_ACCESS_KEY ?? "",
        secretKey: s3.SVC_STACK_S3_SECRET_KEY ?? "",
        bucket,
        prefix: key_prefix,
      },
      authIssuer: servicesIssuer(ctx),
      componentsClientSecret: keycloak.exports(ctx).SVC_STACK_COMPONENTS_CLIENT_SECRET ?? "",
      grpcAddresses: {
        orchestrator: grpcAddresses(ctx.config, "orchestrator"),
        shaper: grpcAddresses(ctx.config, "shaper"),
      },
      timings: "spec",
    }),
    SVC_POD_NAME: pod,
    SVC_HOST: "127.0.0.1",
    SVC_ADVERTISE_HOST: "127.0.0.1",
    SVC_GRPC_PORT: String(ports.grpc),
    SVC_HEALTH_PORT: String(ports.health),
  };
  if (ports.admin !== undefined) {
    env.SVC_ENDPOINT_ADMIN_PORT = String(ports.admin);
    env.SVC_AUDIT_LOG_SINK = "file";
    env.SVC_AUDIT_LOG_FILE = endpointAuditLog(ctx, pod);
  }
  return env;
}

const group: ServiceGroup = {
  name: "services",
  async settle(ctx, members, task) {
    const components = SERVICE_COMPONENTS.filter((c) => members.some((m) => m.name.startsWith(`${c}-`)));
    task.update(0, `waiting for one leader per HA service (${components.join(", ")})`);
    await awaitExpectedState(ctx, components, ctx.config.services.settle_timeout_seconds * 1000);
    task.done("one leader per HA service holds the Lease and the label; endpoints Ready");
  },
};

/** What each component's replicas wait for before they start (besides the stack's servers). */
const AFTER: Record<ServiceComponent, readonly string[]> = {
  orchestrator: [],
  shaper: [],
  // The backend loads keys into the shaper leader, compute registers with the orchestrator leader.
  backend: ["shaper-a", "shaper-b"],
  compute: ["orchestrator-a", "orchestrator-b"],
  // Its readiness follows the backend's; its auth checks the realm at start.
  endpoint: ["keycloak", "backend-a", "backend-b"],
};

function replicaService(component: ServiceComponent, index: number): StackService {
  const pod = `${component}-${REPLICA_SUFFIXES[index]}`;
  const ha = component !== "endpoint";
  const ports = (ctx: StackContext) => {
    const p = replicaPorts(ctx.config, component, index);
    return p.admin === undefined ? [p.health, p.grpc] : [p.health, p.grpc, p.admin];
  };
  return {
    name: pod,
    after: [
      "postgres",
      "kube-apiserver",
      ...(component === "backend" || component === "compute" ? ["minio"] : []),
      ...AFTER[component],
    ],
    // endpoint is Ready once a backend leader serves: up to a lease's expiry when a killed leader left one.
    readiness: { timeoutMs: ha ? 30_000 : 60_000, intervalMs: 200 },
    ports,
    group,

    async install(_ctx, task) {
      task.done(`runs from components/${component} (nothing to fetch)`);
    },

    async start(ctx, task) {
      task.update(1, `Pod ${ctx.config.services.namespace}/${pod}`);
      await ensureReplicaPod(ctx, pod, component);
      mkdirSync(servicesDir(ctx), { recursive: true });
      const daemon = await startServer(ctx, this, {
        ...bunProgram(`components/${component}/src/main.ts`),
        env: replicaEnv(ctx, component, index),
        // Every setting comes from the stack: none of the caller's SVC_* variables reaches a replica.
        dropEnv: dropPrefixes("SVC_"),
      });
      task.done(`127.0.0.1:${replicaPorts(ctx.config, component, index).grpc}`);
      return daemon;
    },

    // Live for an HA replica (a follower is not ready, by design); Ready for endpoint.
    probe: (ctx) =>
      answers200(replicaHealthUrl(ctx, component, index, ha ? "/health" : "/health/ready"), PROBE_TIMEOUT_MS),

    address(ctx) {
      const p = replicaPorts(ctx.config, component, index);
      const admin = p.admin === undefined ? "" : `, admin :${p.admin}`;
      return `127.0.0.1:${p.grpc} (health :${p.health}${admin})`;
    },

    exports: () => ({}),

    role: async (ctx) => describeRole(await replicaRole(ctx, component, index)),
  };
}

/** Every replica `up --services` starts, HA components first, endpoints last (their readiness needs a backend). */
export const COMPONENT_SERVICES: readonly StackService[] = (
  ["orchestrator", "shaper", "backend", "compute", "endpoint"] as const
).flatMap((component) => REPLICA_SUFFIXES.map((_, index) => replicaService(component, index)));

/**
 * What `up --services` prints: the endpoints' addresses and a call through one of them that works as printed (a
 * token of the realm's seeded user `app`, whose tenant is the seed's default `tenant-local`).
 */
export function servicesUsage(ctx: StackContext, grpcurl: string): string[] {
  const endpoints = REPLICA_SUFFIXES.map((suffix, index) => {
    const p = replicaPorts(ctx.config, "endpoint", index);
    return `endpoint-${suffix} 127.0.0.1:${p.grpc} (admin :${p.admin})`;
  });
  const realm = ctx.config.services.realm === "svc" ? "" : ` --realm ${ctx.config.services.realm}`;
  const first = replicaPorts(ctx.config, "endpoint", 0).grpc;
  return [
    `endpoints (gRPC, plaintext): ${endpoints.join(", ")}`,
    "call one (from the repository's root):",
    `  ${grpcurl} -plaintext -import-path proto -proto svc/endpoint/v1/endpoint.proto \\`,
    `    -H "authorization: Bearer $(bun run token issue --user app${realm})" -H 'x-tenant-id: tenant-local' \\`,
    `    -d '{}' 127.0.0.1:${first} svc.endpoint.v1.EndpointService/ListShards`,
  ];
}
