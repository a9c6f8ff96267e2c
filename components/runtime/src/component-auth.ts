import type { ClientOptions, ServiceDefinition, UntypedServiceImplementation } from "@grpc/grpc-js";
import {
  type AuthCore,
  authorizeService,
  createAuthCore,
  createServiceTokenSource,
  serviceTokenInterceptor,
} from "@svc/auth";
import type { Logger } from "pino";
import type { ReplicaConfig } from "./replica-config.ts";

/**
 * A component replica's side of service-to-service auth (docs/components.md, "Service auth"): its gRPC server takes
 * only the `svc-components` service account's tokens (`component.rpc`, realm role `component`), and every call it
 * makes to another component carries this replica's own token of that account.
 */
export interface ComponentAuth {
  readonly core: AuthCore;
  /** grpc-js client options for a client of another component: its calls carry the service token. */
  readonly clientOptions: ClientOptions;
  /** `implementation` with every method of `definition` behind `component.rpc`. */
  guard(definition: ServiceDefinition, implementation: UntypedServiceImplementation): UntypedServiceImplementation;
  close(): void;
}

/**
 * Starts the replica's auth: the issuer's discovery and keys (`AuthCore.start`) and the first service token, so a
 * wrong issuer or a rejected client secret stops the start with its typed error instead of failing every call.
 */
export async function startComponentAuth(config: ReplicaConfig, logger: Logger): Promise<ComponentAuth> {
  const core = createAuthCore({ config: config.auth, logger });
  const tokens = createServiceTokenSource({
    issuer: config.auth.issuer,
    credentials: config.serviceCredentials,
    logger,
  });
  try {
    await core.start();
    await tokens.start();
  } catch (error) {
    tokens.close();
    throw error;
  }
  return {
    core,
    clientOptions: { interceptors: [serviceTokenInterceptor(tokens)] },
    guard: (definition, implementation) =>
      authorizeService(
        core,
        definition,
        implementation,
        Object.fromEntries(Object.keys(definition).map((method) => [method, "component.rpc" as const])),
      ),
    close: () => tokens.close(),
  };
}
