import type { StackService } from "../context.ts";
import { etcd } from "./etcd.ts";
import { kafka } from "./kafka.ts";
import { keycloak } from "./keycloak.ts";
import { kubeApiserver } from "./kube-apiserver.ts";
import { minio } from "./minio.ts";
import { postgres } from "./postgres.ts";

/** Every server of the local stack, in start order. */
export const SERVICES: readonly StackService[] = [postgres, etcd, kubeApiserver, kafka, minio, keycloak];
