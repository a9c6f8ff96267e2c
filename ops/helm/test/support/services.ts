import type { TObject } from "@sinclair/typebox";
import { AgentEnvSchema, parseAgentConfig } from "@svc/agent";
import { AuditApiEnvSchema, parseAuditApiConfig } from "@svc/audit-api";
import { EmitterEnvSchema } from "@svc/audit-emitter";
import { AuthEnvSchema } from "@svc/auth";
import { parseBackendConfig } from "@svc/backend";
import { type ReplicaConfig, ReplicaEnvSchema } from "@svc/component-runtime";
import { parseComputeConfig } from "@svc/compute";
import { parseEndpointConfig } from "@svc/endpoint";
import { KmsEnvSchema, parseKmsConfig } from "@svc/kms";
import { parseOrchestratorConfig } from "@svc/orchestrator";
import { parseQueueConsumerConfig, QueueConsumerEnvSchema } from "@svc/queue-consumer";
import { parseShaperConfig } from "@svc/shaper";
// The components' own schemas are not exported by their packages; their config.ts is the one place they live.
import { BackendEnvSchema } from "../../../../components/backend/src/config.ts";
import { ComputeEnvSchema } from "../../../../components/compute/src/config.ts";
import { EndpointEnvSchema } from "../../../../components/endpoint/src/config.ts";
import { OrchestratorEnvSchema } from "../../../../components/orchestrator/src/config.ts";
import { ShaperEnvSchema } from "../../../../components/shaper/src/config.ts";

type Env = Record<string, string | undefined>;

/** What the chart must agree with about one service: the ports its settings open. */
export interface ParsedService {
  /** Container port name → the port the process listens on, per its own parsed settings. */
  ports: Record<string, number>;
  /** What its HTTP port speaks, when not plain HTTP (the KMS's is HTTPS with TLS on). */
  scheme?: "HTTP" | "HTTPS";
}

export interface ServiceSpec {
  /** The env variables its settings read: the keys of the schemas it parses. */
  schemas: TObject[];
  parse: (env: Env) => ParsedService;
}

const replicaPorts = (replica: ReplicaConfig) => ({ grpc: replica.grpcPort, health: replica.healthPort });

/** An HA component: the replica's settings, its own and auth's; its gRPC and health ports. */
const haComponent = (schema: TObject, parse: (env: Env) => { replica: ReplicaConfig }): ServiceSpec => ({
  schemas: [ReplicaEnvSchema, schema, AuthEnvSchema],
  parse: (env) => ({ ports: replicaPorts(parse(env).replica) }),
});

/** Every service of the images (ops/images/entry.sh) with its schemas and parser. */
export const SERVICES: Record<string, ServiceSpec> = {
  orchestrator: haComponent(OrchestratorEnvSchema, parseOrchestratorConfig),
  backend: haComponent(BackendEnvSchema, parseBackendConfig),
  compute: haComponent(ComputeEnvSchema, parseComputeConfig),
  shaper: haComponent(ShaperEnvSchema, parseShaperConfig),
  endpoint: {
    schemas: [ReplicaEnvSchema, EndpointEnvSchema, AuthEnvSchema, EmitterEnvSchema],
    parse: (env) => {
      const config = parseEndpointConfig(env);
      return { ports: { ...replicaPorts(config.replica), admin: config.adminPort } };
    },
  },
  kms: {
    schemas: [KmsEnvSchema, AuthEnvSchema, EmitterEnvSchema],
    parse: (env) => {
      const config = parseKmsConfig(env);
      return {
        ports: { grpc: config.grpcPort, http: config.httpPort },
        scheme: config.tls.enabled ? "HTTPS" : "HTTP",
      };
    },
  },
  agent: {
    schemas: [AgentEnvSchema],
    parse: (env) => ({ ports: { "agent-metrics": parseAgentConfig(env).metricsPort ?? -1 } }),
  },
  "queue-consumer": {
    schemas: [QueueConsumerEnvSchema],
    parse: (env) => ({ ports: { metrics: parseQueueConsumerConfig(env).metricsPort ?? -1 } }),
  },
  "audit-api": {
    schemas: [AuditApiEnvSchema, AuthEnvSchema],
    parse: (env) => {
      const config = parseAuditApiConfig(env);
      return { ports: { grpc: config.grpcPort, rest: config.restPort } };
    },
  },
};

/** The env names a service's schemas know. */
export const knownNames = (spec: ServiceSpec) =>
  new Set(spec.schemas.flatMap((schema) => Object.keys(schema.properties)));
