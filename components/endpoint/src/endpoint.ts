import { credentials } from "@grpc/grpc-js";
import { auditInterceptor, createAuditEmitter, linkRefusedCaller, withAuditIdentity } from "@svc/audit-emitter";
import { authorizeService } from "@svc/auth";
import { type Replica, startComponentAuth, startReplica } from "@svc/component-runtime";
import { BackendServiceClient, ComputeServiceClient, EndpointServiceService } from "@svc/proto";
import type { Logger } from "pino";
import { adminApp } from "./admin-app.ts";
import { ComponentRoute } from "./component-route.ts";
import { type EndpointConfig, ROUTED_COMPONENTS, type RoutedComponent } from "./config.ts";
import { discoveryOf } from "./discovery.ts";
import { endpointImplementation } from "./endpoint-service.ts";
import { ENDPOINT, ENDPOINT_READINESS_GATE } from "./profile.ts";
import { ClientPool } from "./route-call.ts";

export interface Endpoint extends Replica {
  readonly adminPort: number;
}

/**
 * Starts one endpoint replica (no election; every ready replica serves): a route per component, the application
 * gRPC service behind `@svc/auth` and the audit interceptor, readiness gated on backend only, `/health/deps` and
 * `/health/ha`, and the `/admin/*` server.
 */
export async function startEndpoint(config: EndpointConfig, logger: Logger): Promise<Endpoint> {
  // Before the auth starts: a kubeconfig that cannot be read throws here, with nothing open yet.
  const discover = discoveryOf(config.discovery);
  // One auth core for the application service and the admin paths; its service token goes on calls to components.
  const auth = await startComponentAuth(config.replica, logger);
  const routes = Object.fromEntries(
    ROUTED_COMPONENTS.map((c) => [c, new ComponentRoute(c, discover(c), config.probeMs)]),
  ) as Record<RoutedComponent, ComponentRoute>;
  await Promise.all(Object.values(routes).map((route) => route.start()));
  const backend = {
    route: routes.backend,
    pool: new ClientPool(
      (address) => new BackendServiceClient(address, credentials.createInsecure(), auth.clientOptions),
    ),
  };
  const compute = {
    route: routes.compute,
    pool: new ClientPool(
      (address) => new ComputeServiceClient(address, credentials.createInsecure(), auth.clientOptions),
    ),
  };
  const deps = () => Object.fromEntries(ROUTED_COMPONENTS.map((c) => [c, routes[c].snapshot()]));
  const gate = () => ENDPOINT_READINESS_GATE.every((c) => routes[c].current() !== undefined);
  const emitter = createAuditEmitter(config.audit, { logger });
  const implementation = withAuditIdentity(
    EndpointServiceService,
    authorizeService(
      auth.core,
      EndpointServiceService,
      endpointImplementation({ backend, compute }, config.callTimeoutMs),
      {
        createIndex: "endpoint.grpc",
        submitJob: "endpoint.grpc",
        getTask: "endpoint.grpc",
        listShards: "endpoint.grpc",
      },
      // a PERMISSION_DENIED call's record names the verified caller that was refused
      { onRefused: linkRefusedCaller },
    ),
  );
  const admin = adminApp({ auth: auth.core, services: deps, backend, callTimeoutMs: config.callTimeoutMs });
  // What endpoint opened itself: closed after the replica's servers stopped, or when the start fails.
  const closeOwn = async () => {
    if (admin.server) await admin.stop();
    await Promise.all(Object.values(routes).map((route) => route.stop()));
    backend.pool.close();
    compute.pool.close();
    auth.close();
    await emitter.close();
  };
  try {
    // Elysia listens with SO_REUSEPORT unless told not to: a second process on a taken admin port would start and
    // share its connections instead of failing. A taken port throws here, after the routes and the auth started.
    admin.listen({ hostname: config.replica.host, port: config.adminPort, reusePort: false });
  } catch (error) {
    await closeOwn();
    throw error;
  }
  const replica = await startReplica({
    profile: ENDPOINT,
    config: config.replica,
    logger,
    services: [{ name: "svc.endpoint.v1.EndpointService", definition: EndpointServiceService, implementation }],
    grpcInterceptors: [auditInterceptor(emitter, { exclude: (path) => path.startsWith("/grpc.health.v1."), logger })],
    gate,
    diagnostics: {
      deps: async () => deps(),
      ha: async () => ({
        component: ENDPOINT.name,
        pod: config.replica.pod,
        ready: gate(),
        readinessGate: [...ENDPOINT_READINESS_GATE],
        discovery: config.discovery.mode,
        routes: Object.fromEntries(
          ROUTED_COMPONENTS.map((c) => [c, { serving: routes[c].current()?.grpc ?? null, ...routes[c].snapshot() }]),
        ),
      }),
    },
    close: closeOwn,
  }).catch(async (error: unknown) => {
    await closeOwn();
    throw error;
  });
  logger.info({ event: "admin-ready", adminPort: admin.server?.port }, "admin paths ready");
  return Object.assign(replica, { adminPort: admin.server?.port ?? config.adminPort });
}
