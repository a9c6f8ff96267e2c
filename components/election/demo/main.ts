// The demo replica: elector + health server + a gRPC service behind the follower guard, configured by env
// (config.ts). Logs JSON lines on stdout: `ready` (ports), election events, one `served` line per business call.
import { Server, ServerCredentials, type sendUnaryData } from "@grpc/grpc-js";
import { CoreV1Api } from "@kubernetes/client-node";
import { HealthState, serveHealth } from "@svc/health";
import { loadKubeConfig, makeKubeClient } from "@svc/kube";
import { HealthCheckResponse_ServingStatus, HealthService } from "@svc/proto";
import pino from "pino";
import { Registry } from "prom-client";
import { createElector, guardService, healthSource, keepLeaderLabel } from "../index.ts";
import { parseDemoConfig } from "./config.ts";
import { DemoService, demoImplementation } from "./demo-service.ts";

let config: ReturnType<typeof parseDemoConfig>;
try {
  config = parseDemoConfig(process.env);
} catch (error) {
  process.stderr.write(`election demo: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}

const log = pino({ base: { component: config.component, pod: config.pod } }, pino.destination({ sync: true }));
const kubeconfig = config.backend === "k8s-lease" ? loadKubeConfig(config.kubeconfigPath) : undefined;
const registry = new Registry();
const elector = createElector({
  backend: config.backend,
  component: config.component,
  identity: config.pod,
  timings: config.timings,
  lockName: config.lockName,
  kube: kubeconfig ? { kubeconfig, namespace: config.namespace } : undefined,
  postgres: config.pgUrl ? { url: config.pgUrl, table: config.pgTable } : undefined,
  registry,
  onAttemptError: (error) =>
    log.warn({ err: error instanceof Error ? error.message : String(error) }, "attempt failed"),
});

const state = new HealthState(config.component, config.pod, config.backend === "" ? "active" : "follower");
state.follow(healthSource(elector));
if (kubeconfig && config.labelPods) {
  keepLeaderLabel(elector, {
    api: makeKubeClient(kubeconfig, CoreV1Api),
    namespace: config.namespace,
    pod: config.pod,
    label: `svc.ai/${config.component}-leader`,
    retryMs: config.timings.retryPeriodSeconds * 1000,
    requestTimeoutMs: config.timings.renewDeadlineSeconds * 1000,
    onError: (error) => log.warn({ err: error instanceof Error ? error.message : String(error) }, "label failed"),
  });
}

let exiting = false;
elector.subscribe((event) => {
  if (event.type === "became-leader") log.info({ event: event.type, term: event.term }, "became leader");
  else if (event.type === "new-leader-observed") log.info({ event: event.type, holder: event.holder }, "leader seen");
  else {
    log.info({ event: event.type, term: event.term, reason: event.reason }, "lost leadership");
    if (!event.released && !exiting) {
      // Spec: a leader that cannot renew exits; the platform restarts it.
      exiting = true;
      process.exit(1);
    }
  }
});

const grpc = new Server();
grpc.addService(
  DemoService,
  guardService(
    elector,
    DemoService,
    demoImplementation(
      config.pod,
      () => elector.currentTerm(),
      (call) => log.info({ event: "served", at: call.at, term: call.term, id: call.id }, "served"),
    ),
  ),
);
grpc.addService(HealthService, {
  check: (_call: unknown, callback: sendUnaryData<unknown>) =>
    callback(null, { status: HealthCheckResponse_ServingStatus.SERVING }),
});
const grpcPort = await new Promise<number>((resolve, reject) =>
  grpc.bindAsync(`${config.host}:${config.grpcPort}`, ServerCredentials.createInsecure(), (error, port) =>
    error ? reject(error) : resolve(port),
  ),
);

await elector.start();
state.markInitialized();
const health = serveHealth(state, { port: config.healthPort, hostname: config.host });
log.info({ event: "ready", grpcPort, healthPort: health.port, role: elector.snapshot().role }, "ready");

async function shutdown(signal: string) {
  if (exiting) return;
  exiting = true;
  log.info({ event: "shutdown", signal }, "shutting down");
  await elector.stop().catch((error) => log.warn({ err: String(error) }, "release failed"));
  grpc.forceShutdown();
  await health.stop();
  log.info({ event: "stopped" }, "stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
