import {
  Server,
  type ServerInterceptor,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { bindGrpcServer, type RunnableService, stopGrpcServer } from "@svc/common";
import {
  type ComponentProfile,
  createElector,
  type Elector,
  guardService,
  healthSource,
  keepLeaderLabel,
} from "@svc/election";
import { type EndpointDiagnostics, grpcHealth, HealthState, serveHealth } from "@svc/health";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { HealthService } from "@svc/proto";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import { dutyRegistry } from "./duty-metrics.ts";
import { RuntimeError } from "./errors.ts";
import { grpcServerMetrics } from "./grpc-metrics.ts";
import type { ReplicaConfig } from "./replica-config.ts";

/** One business service of the replica; it is served only while the replica serves (the follower guard). */
export interface ReplicaService {
  /** Full gRPC service name (`svc.orchestrator.v1.OrchestratorService`), answered by grpc.health.v1 too. */
  name: string;
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

/** What serving work is handed: the term of the leadership (undefined with no election) and its end. */
export interface ServingContext {
  term: number | undefined;
  signal: AbortSignal;
  /** `advertiseHost:grpcPort` of this replica (the bound port). */
  address: string;
  /**
   * The other replica last seen holding the lock before this one took office, if any. Its lease expired (or it
   * released it), so it stopped serving by its renew deadline: its duties may be taken over at once.
   */
  previousLeader: string | undefined;
}

export interface StartReplicaOptions {
  profile: ComponentProfile;
  config: ReplicaConfig;
  logger: Logger;
  services: readonly ReplicaService[];
  /**
   * Work that runs while this replica serves: from `became-leader` until the leadership ends (its signal), or,
   * with no election (`""`), from start until stop. Leader-only duties live here and hand `term` to every write.
   * A rejection while still serving ends the process (exit 1): a leader that cannot do its duties steps down.
   */
  whileServing?: (context: ServingContext) => Promise<void>;
  /** `endpoint`'s `/health/deps` and `/health/ha`. */
  diagnostics?: EndpointDiagnostics;
  /**
   * A readiness gate on top of the role (endpoint: backend only, spec: Limits): while it answers false,
   * `/health/ready` is 503 and the replica shows as `follower` (not admitted); `/health/pod-ready` stays 200.
   */
  gate?: () => boolean;
  /** grpc-js server interceptors (endpoint: the audit interceptor). */
  grpcInterceptors?: ServerInterceptor[];
  /** Closes the component's own clients, after the servers stopped. */
  close?: () => Promise<void>;
  /** Bound of each graceful stop step (serving work, gRPC drain); default 5 s. */
  stopStepMs?: number;
}

export interface Replica extends RunnableService {
  readonly elector: Elector;
  readonly health: HealthState;
  readonly grpcPort: number;
  readonly healthPort: number;
  /** `advertiseHost:grpcPort`: where other components dial this replica. */
  readonly address: string;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** The annotations endpoint reads to reach a labelled Pod (spec: Services route only to the labelled pod). */
export const ADDRESS_ANNOTATIONS = { grpc: "svc.ai/grpc-address", health: "svc.ai/health-address" } as const;

async function annotateAddresses(
  api: CoreV1Api,
  config: ReplicaConfig,
  addresses: { grpc: string; health: string },
): Promise<void> {
  const annotations = { [ADDRESS_ANNOTATIONS.grpc]: addresses.grpc, [ADDRESS_ANNOTATIONS.health]: addresses.health };
  await api.patchNamespacedPod(
    { name: config.pod, namespace: config.namespace, body: { metadata: { annotations } } },
    mergePatch,
  );
}

const within = (ms: number, work: Promise<unknown>) =>
  Promise.race([work.then(() => undefined), new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);

/**
 * One HA component replica (spec: States and transitions, Health endpoints, Errors): the elector of
 * `election.backend`, the health server, the business services behind the follower guard (UNAVAILABLE on a
 * follower, never forwarded), grpc.health.v1, the leader label, the serving work, and `/metrics` on the health
 * port (election, gRPC calls by method and code, the duty counters of `@svc/component-runtime/metrics`). A leader
 * that cannot renew ends `done` with `RUNTIME_LEADERSHIP_LOST` (main exits 1; the platform restarts it and it
 * rejoins as follower).
 * `stop()` ends the serving work and releases the Lease first (a follower takes over at once), then drains gRPC.
 */
export async function startReplica(options: StartReplicaOptions): Promise<Replica> {
  const { config, logger, profile } = options;
  const stopStepMs = options.stopStepMs ?? 5_000;
  const kubeconfig = config.backend === "k8s-lease" ? loadKubeConfig(config.kubeconfigPath) : undefined;
  // One registry per replica (two replicas in one process do not collide); `/metrics` adds the duty counters.
  const metrics = new Registry();
  const elector = createElector({
    backend: config.backend,
    component: profile.name,
    identity: config.pod,
    timings: config.timings,
    lockName: config.lockName,
    kube: kubeconfig ? { kubeconfig, namespace: config.namespace } : undefined,
    postgres: config.pgUrl ? { url: config.pgUrl, table: config.pgTable } : undefined,
    registry: metrics,
    onAttemptError: (error) => logger.warn({ err: messageOf(error) }, "election attempt failed"),
  });
  const health = new HealthState(profile.name, config.pod, config.backend === "" ? "active" : "follower");
  const roles = healthSource(elector);
  const gate = options.gate;
  health.follow(gate ? { ...roles, role: () => (gate() ? roles.role() : "follower") } : roles);
  // The Pod's leader label and its address annotations, patched through one client.
  const podApi = kubeconfig && config.labelPods ? makeKubeClient(kubeconfig, CoreV1Api) : undefined;
  if (podApi) {
    keepLeaderLabel(elector, {
      api: podApi,
      namespace: config.namespace,
      pod: config.pod,
      label: profile.election?.leaderLabel ?? `svc.ai/${profile.name}-leader`,
      retryMs: config.timings.retryPeriodSeconds * 1000,
      requestTimeoutMs: config.timings.renewDeadlineSeconds * 1000,
      onError: (error) => logger.warn({ err: messageOf(error) }, "leader label failed"),
    });
  }

  let stopping = false;
  let settleDone: { resolve: () => void; reject: (error: unknown) => void } = { resolve() {}, reject() {} };
  const done = new Promise<void>((resolve, reject) => {
    settleDone = { resolve, reject };
  });
  const fail = (error: unknown) => {
    if (!stopping) settleDone.reject(error);
  };

  let serving: Promise<void> = Promise.resolve();
  let address = "";
  let lastOtherHolder: string | undefined;
  const serve = (leadership: Pick<ServingContext, "term" | "signal">) => {
    if (!options.whileServing) return;
    const context = { ...leadership, address, previousLeader: lastOtherHolder };
    serving = options.whileServing(context).catch((error: unknown) => {
      if (context.signal.aborted) return;
      logger.error({ err: messageOf(error), term: context.term }, "serving work failed");
      fail(error);
    });
  };

  elector.subscribe((event) => {
    if (event.type === "became-leader") {
      logger.info({ event: event.type, term: event.term }, "became leader");
      serve({ term: event.term, signal: event.signal });
    } else if (event.type === "new-leader-observed") {
      if (event.holder && event.holder !== config.pod) lastOtherHolder = event.holder;
      logger.info({ event: event.type, holder: event.holder, term: event.term }, "leader observed");
    } else {
      logger.info({ event: event.type, term: event.term, reason: event.reason }, "lost leadership");
      if (!event.released) {
        fail(new RuntimeError("RUNTIME_LEADERSHIP_LOST", `${profile.name} term ${event.term}: ${event.reason}`));
      }
    }
  });

  // The metrics interceptor first: the innermost, it counts the status actually sent.
  const grpc = new Server({ interceptors: [grpcServerMetrics(metrics), ...(options.grpcInterceptors ?? [])] });
  for (const service of options.services) {
    grpc.addService(service.definition, guardService(elector, service.definition, service.implementation));
  }
  grpc.addService(
    HealthService,
    grpcHealth(
      health,
      options.services.map((s) => s.name),
    ),
  );
  const grpcPort = await bindGrpcServer(grpc, `${config.host}:${config.grpcPort}`);
  address = `${config.advertiseHost}:${grpcPort}`;
  let healthServer: ReturnType<typeof serveHealth> | undefined;
  const activeController = new AbortController();
  try {
    await elector.start();
    health.markInitialized();
    healthServer = serveHealth(health, {
      port: config.healthPort,
      hostname: config.host,
      diagnostics: options.diagnostics,
      metrics: {
        contentType: metrics.contentType,
        metrics: () => Registry.merge([metrics, dutyRegistry]).metrics(),
      },
    });
  } catch (error) {
    grpc.forceShutdown();
    await elector.stop().catch(() => undefined);
    throw error;
  }
  if (config.backend === "") serve({ term: undefined, signal: activeController.signal });
  if (podApi) {
    // Where endpoint reaches this replica when it finds it by the leader label (outside a cluster the Pod has no IP).
    annotateAddresses(podApi, config, {
      grpc: address,
      health: `${config.advertiseHost}:${healthServer.port}`,
    }).catch((error: unknown) => logger.warn({ err: messageOf(error) }, "pod address annotation failed"));
  }
  logger.info(
    { event: "ready", grpcPort, healthPort: healthServer.port, role: elector.snapshot().role },
    `${profile.name} replica ready`,
  );

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      stopping = true;
      activeController.abort(new Error("stopping"));
      await elector.stop().catch((error: unknown) => logger.warn({ err: messageOf(error) }, "release failed"));
      await within(stopStepMs, serving);
      await stopGrpcServer(grpc, stopStepMs);
      await healthServer?.stop();
      await options.close?.();
      logger.info({ event: "stopped" }, `${profile.name} replica stopped`);
      settleDone.resolve();
    })();
    return stopped;
  };

  return {
    elector,
    health,
    grpcPort,
    healthPort: healthServer.port,
    address,
    stop,
    done,
  };
}
