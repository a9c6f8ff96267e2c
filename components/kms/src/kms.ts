import { Server, ServerCredentials } from "@grpc/grpc-js";
import { type AuditEmitter, createAuditEmitter } from "@svc/audit-emitter";
import { createAuthCore } from "@svc/auth";
import { bindGrpcServer, type RunnableService, stopGrpcServer } from "@svc/common";
import { countUnaryCalls } from "@svc/component-runtime/metrics";
import { grpcHealth, HealthState } from "@svc/health";
import { HealthService, KmsServiceService } from "@svc/proto";
import { SQL } from "bun";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import { adminApp } from "./admin-app.ts";
import { bootstrapStore } from "./bootstrap-store.ts";
import { issueServerCertificate, type ServerCertificate } from "./certificates.ts";
import type { KmsConfig } from "./config.ts";
import { KmsError } from "./errors.ts";
import { exportCaCertificate } from "./export-ca.ts";
import { kmsServiceImplementation } from "./grpc-service.ts";
import { type EventOutcome, recordKeyEvent } from "./key-events.ts";
import { KeyService } from "./key-service.ts";
import { KeyStore } from "./key-store.ts";
import { Vault } from "./vault.ts";

export interface Kms extends RunnableService {
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly vault: Vault;
  /** Milliseconds the unseal at start took (scrypt + unwrap), for the bench. */
  readonly unsealMs: number;
}

function bindGrpc(server: Server, address: string, credentials: ServerCredentials): Promise<number> {
  return bindGrpcServer(server, address, credentials).catch((error: Error) => {
    throw new KmsError("KMS_LISTEN_FAILED", `cannot bind ${address}: ${error.message}`, { cause: error });
  });
}

/** Bootstraps an empty store when allowed (recorded), else refuses to start on one. */
async function ensureBootstrapped(config: KmsConfig, store: KeyStore, emitter: AuditEmitter, logger: Logger) {
  if (await store.master()) return;
  if (config.bootstrap !== "if-empty") {
    throw new KmsError(
      "KMS_NOT_BOOTSTRAPPED",
      `the key store (schema ${config.schema}) is empty: start once with SVC_KMS_BOOTSTRAP=if-empty to bootstrap it`,
      { subject: "SVC_KMS_BOOTSTRAP" },
    );
  }
  const outcome: EventOutcome = { resource: "kms", startedAt: performance.now(), attributes: { trigger: "start" } };
  try {
    await bootstrapStore(store, config.passphrase);
  } catch (error) {
    await recordKeyEvent(emitter, "bootstrap", { ...outcome, error });
    throw error;
  }
  await recordKeyEvent(emitter, "bootstrap", outcome);
  logger.info({ schema: config.schema }, "kms bootstrapped: master key and root CA created");
}

/**
 * Starts the KMS (docs/kms.md): audit emitter, key store, auth start-up check, bootstrap if allowed, unseal from the
 * secret (recorded), CA export, server certificate, then the gRPC (TLS by default) and admin HTTP servers.
 */
export async function startKms(config: KmsConfig, options: { logger: Logger }): Promise<Kms> {
  const { logger } = options;
  const emitter = createAuditEmitter(config.audit, { logger });
  const sql = new SQL({ url: config.pgUrl, max: config.pgPool });
  const cleanups: (() => Promise<unknown>)[] = [() => sql.close(), () => emitter.close()];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => {});
  };
  try {
    const store = new KeyStore(sql, config.schema);
    await store.migrate();
    const auth = createAuthCore({ config: config.auth, logger });
    await auth.start();
    await ensureBootstrapped(config, store, emitter, logger);

    const vault = new Vault(store);
    const keys = new KeyService(store, vault);
    const unseal = async (passphrase: string, outcome: EventOutcome) => {
      try {
        await vault.unseal(passphrase);
      } catch (error) {
        await recordKeyEvent(emitter, "unseal", { ...outcome, error });
        throw error;
      }
      await recordKeyEvent(emitter, "unseal", outcome);
    };
    const unsealStarted = performance.now();
    await unseal(config.passphrase, { resource: "kms", startedAt: unsealStarted, attributes: { trigger: "start" } });
    const unsealMs = performance.now() - unsealStarted;
    logger.info({ unsealMs: Math.round(unsealMs) }, "kms unsealed");

    exportCaCertificate(config.tls.caExportPath, vault.caCertPem);
    let certificate: ServerCertificate | undefined;
    if (config.tls.enabled) {
      const caKey = await vault.caPrivateKey();
      certificate = await issueServerCertificate(
        { certPem: vault.caCertPem, privateKeyPkcs8: caKey },
        config.tls.san,
        config.tls.certDays,
      );
      caKey.fill(0);
    } else {
      logger.warn({ setting: "SVC_KMS_TLS=false" }, "kms: TLS is OFF (plaintext gRPC and HTTP): explicitly configured");
    }

    const health = new HealthState("kms", config.instance, "active");
    health.follow({
      role: () => (vault.sealed ? "follower" : "active"),
      holder: () => undefined,
      term: () => undefined,
    });
    // gRPC calls by method and the status answered (auth refusals included), served on the admin port's /metrics
    const metrics = new Registry();
    const grpc = new Server();
    const service = kmsServiceImplementation({ auth, keys, vault, emitter, unseal, logger });
    grpc.addService(KmsServiceService, countUnaryCalls(metrics, KmsServiceService, service));
    grpc.addService(HealthService, grpcHealth(health, ["svc.kms.v1.KmsService"]));
    const credentials = certificate
      ? ServerCredentials.createSsl(
          null,
          [{ private_key: Buffer.from(certificate.keyPem), cert_chain: Buffer.from(certificate.certPem) }],
          false,
        )
      : ServerCredentials.createInsecure();
    const grpcPort = await bindGrpc(grpc, `${config.grpcHost}:${config.grpcPort}`, credentials);
    cleanups.push(async () => grpc.forceShutdown());
    let http: ReturnType<ReturnType<typeof adminApp>["listen"]>;
    try {
      http = adminApp(auth, keys, health, metrics).listen({
        hostname: config.httpHost,
        port: config.httpPort,
        // Elysia asks Bun for SO_REUSEPORT by default, which lets a second KMS bind a port in use and share its
        // connections: a taken port must fail the start instead.
        reusePort: false,
        ...(certificate ? { tls: { cert: certificate.certPem, key: certificate.keyPem } } : {}),
      });
    } catch (cause) {
      throw new KmsError(
        "KMS_LISTEN_FAILED",
        `cannot bind the admin HTTP port ${config.httpHost}:${config.httpPort} (SVC_KMS_HTTP_PORT): ${(cause as Error).message}`,
        { subject: "SVC_KMS_HTTP_PORT", cause },
      );
    }
    health.markInitialized();

    let resolveDone: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        await http.stop();
        await stopGrpcServer(grpc, 5_000);
        // The shutdown seal drops the master key and every cached key version like the Seal RPC: recorded the same
        // way (trigger `shutdown`) before the emitter closes; a KMS sealed already has nothing left to drop.
        const sealStarted = performance.now();
        const wasUnsealed = !vault.sealed;
        vault.seal();
        if (wasUnsealed) {
          await recordKeyEvent(emitter, "seal", {
            resource: "kms",
            startedAt: sealStarted,
            attributes: { trigger: "shutdown" },
          }).catch((error: unknown) =>
            // the key is dropped all the same; the stop goes on (there is no call to fail)
            logger.error({ err: error, code: (error as { code?: unknown }).code }, "kms: shutdown seal not recorded"),
          );
        }
        await emitter.close();
        await sql.close();
        logger.info({}, "kms stopped");
        resolveDone();
      })();
      return stopping;
    };
    return { grpcPort, httpPort: http.server?.port ?? config.httpPort, vault, unsealMs, stop, done };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
