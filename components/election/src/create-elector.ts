import { CoordinationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { makeKubeClient, makeKubeWatch } from "@svc/kube";
import type { Registry } from "prom-client";
import type { ElectionBackend } from "./component-profile.ts";
import { ElectionMetrics } from "./election-metrics.ts";
import type { Elector } from "./elector.ts";
import { ElectionError } from "./errors.ts";
import { K8sLeaseLock } from "./k8s-lease-lock.ts";
import { LeaseElector } from "./lease-elector.ts";
import { type LeaseTimings, validateLeaseTimings } from "./lease-timings.ts";
import { PostgresLeaseLock } from "./postgres-lease-lock.ts";
import { StaticElector } from "./static-elector.ts";

export interface ElectorSettings {
  backend: ElectionBackend;
  component: string;
  /** This replica: its Pod name. */
  identity: string;
  timings: LeaseTimings;
  /** Lease / row name; default `<component>-leader`. */
  lockName?: string;
  /** For `k8s-lease`. */
  kube?: { kubeconfig: KubeConfig; namespace: string };
  /** For `postgres`. */
  postgres?: { url: string; table?: string };
  /** Metrics go here when given. */
  registry?: Registry;
  onAttemptError?: (error: unknown) => void;
}

/** The elector of one replica for its configured backend; timings are validated first (start-up error). */
export function createElector(settings: ElectorSettings): Elector {
  const { backend, component, identity } = settings;
  const timings = validateLeaseTimings(settings.timings, `${component}.lease`);
  const lockName = settings.lockName ?? `${component}-leader`;
  let metrics: ElectionMetrics | undefined;
  const onAttemptError = (error: unknown) => {
    metrics?.countFailure();
    settings.onAttemptError?.(error);
  };
  let elector: Elector;
  switch (backend) {
    case "single-node":
    case "":
      elector = new StaticElector(backend, identity);
      break;
    case "k8s-lease": {
      const kube = settings.kube;
      if (!kube) throw new ElectionError("ELECTION_CONFIG_INVALID", `${component}.election`, "k8s-lease needs kube");
      const lock = new K8sLeaseLock({
        api: makeKubeClient(kube.kubeconfig, CoordinationV1Api),
        namespace: kube.namespace,
        name: lockName,
        identity,
        leaseDurationSeconds: timings.leaseDurationSeconds,
        watch: makeKubeWatch(kube.kubeconfig),
      });
      elector = new LeaseElector({ backend, identity, lock, timings, onAttemptError });
      break;
    }
    case "postgres": {
      const pg = settings.postgres;
      if (!pg) throw new ElectionError("ELECTION_CONFIG_INVALID", `${component}.election`, "postgres needs a url");
      const lock = new PostgresLeaseLock({
        url: pg.url,
        table: pg.table,
        name: lockName,
        identity,
        leaseDurationSeconds: timings.leaseDurationSeconds,
      });
      elector = new LeaseElector({ backend, identity, lock, timings, onAttemptError });
      break;
    }
    default:
      throw new ElectionError(
        "ELECTION_BACKEND_UNSUPPORTED",
        `${component}.election.backend`,
        `${JSON.stringify(backend)} is not a backend`,
      );
  }
  if (settings.registry) metrics = new ElectionMetrics(settings.registry, elector, component);
  return elector;
}
