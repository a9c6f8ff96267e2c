import type { StackService } from "../context.ts";
import { COMPONENT_SERVICES } from "./components.ts";
import { etcd } from "./etcd.ts";
import { kafka } from "./kafka.ts";
import { keycloak } from "./keycloak.ts";
import { kms } from "./kms.ts";
import { kmsAuditAgent, kmsAuditConsumer } from "./kms-audit.ts";
import { kubeApiserver } from "./kube-apiserver.ts";
import { minio } from "./minio.ts";
import { postgres } from "./postgres.ts";
import { SERVICES_AUDIT } from "./services-audit.ts";

/** Every server of the local stack, in start order: what `up` starts by default and `status` always shows. */
export const SERVICES: readonly StackService[] = [postgres, etcd, kubeApiserver, kafka, minio, keycloak];

/** What `up --services` adds and `down --services` stops: the component replicas and the endpoints' audit pipeline. */
export const SERVICES_FLAG: readonly StackService[] = [...COMPONENT_SERVICES, ...SERVICES_AUDIT];

/**
 * Servers started only when asked for (`up --kms`, `up --kms-audit`, `up --services`, or by name), after the
 * default ones; `status` shows one once it was started (its pid file exists), `down` stops them first.
 */
export const OPTIONAL_SERVICES: readonly StackService[] = [kms, kmsAuditAgent, kmsAuditConsumer, ...SERVICES_FLAG];

export const ALL_SERVICES: readonly StackService[] = [...SERVICES, ...OPTIONAL_SERVICES];
