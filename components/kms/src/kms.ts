import { Server, ServerCredentials } from "@grpc/grpc-js";
import { type AuditEmitter, createAuditEmitter } from "@svc/audit-emitter";
import { type AuthCore, createAuthCore } from "@svc/auth";
import { bindGrpcServer, type RunnableService, stopGrpcServer } from "@svc/common";
import { grpcHealth, HealthState } from "@svc/health";
import { HealthService, KmsServiceService } from "@svc/proto";
import { SQL } from "bun";
import type { Logger } from "pino";
import { adminApp } from "./admin-app.ts";
import { bootstrapStore } from "./bootstrap-store.ts";
import { issueServerCertificate, type ServerCertificate } from "./certificates.ts";
import type { KmsConfig } from "./config.ts";
import { KmsError } from "./errors.ts";
import { exportCaCertificate } from "./export-ca.ts";
import { kmsServiceImplementation } from "./grpc-service.ts";
import { type EventOutcome, type KeyEventSink, recordKeyEvent } from "./key-events.ts";
import { KeyService } from "./key-service.ts";
import { KeyStore } from "./key-store.ts";
import { type KmsPeers, singleProcess } from "./kms-peers.ts";
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

/** Unseals `vault` with `passphrase` and records the `unseal` event with its outcome. */
async function recordedUnseal(
  unseal: (passphrase: string) => Promise<void>,
  emitter: KeyEventSink,
  passphrase: string,
  outcome: EventOutcome,
): Promise<void> {
  try {
    await unseal(passphrase);
  } catch (error) {
    await recordKeyEvent(emitter, "unseal", { ...outcome, error });
    throw error;
  }
  await recordKeyEvent(emitter, "unseal", outcome);
}

/** What the start prepares once for the whole KMS, before any process serves. */
export interface PreparedKms {
  store: KeyStore;
  vault: Vault;
  certificate: ServerCertificate | undefined;
  unsealMs: number;
}

/**
 * The start's once-only steps (docs/kms.md "Seal model", "TLS and the CA"): schema, bootstrap if allowed (recorded),
 * unseal from the secret (recorded), CA export, then the server certificate when TLS is on.
 */
export async function prepareKms(
  config: KmsConfig,
  sql: SQL,
  emitter: AuditEmitter,
  logger: Logger,
): Promise<PreparedKms> {
  const store = new KeyStore(sql, config.schema);
  await store.migrate();
  await ensureBootstrapped(config, store, emitter, logger);
  const vault = new Vault(store);
  const unsealStarted = performance.now();
  await recordedUnseal((passphrase) => vault.unseal(passphrase), emitter, config.passphrase, {
    resource: "kms",
    startedAt: unsealStarted,
    attributes: { trigger: "start" },
  });
  const unsealMs = performance.now() - unsealStarted;
  logger.info({ unsealMs: Math.round(unsealMs) }, "kms unsealed");
  exportCaCertificate(config.tls.caExportPath, vault.caCertPem);
  if (!config.tls.enabled) {
    logger.warn({ setting: "SVC_KMS_TLS=false" }, "kms: TLS is OFF (plaintext gRPC and HTTP): explicitly configured");
    return { store, vault, certificate: undefined, unsealMs };
  }
  const caKey = await vault.caPrivateKey();
  const certificate = await issueServerCertificate(
    { certPem: vault.caCertPem, privateKeyPkcs8: caKey },
    config.tls.san,
    config.tls.certDays,
  );
  caKey.fill(0);
  return { store, vault, certificate, unsealMs };
}

/** One serving process: its gRPC server (every KMS process) and, when it has it, the admin HTTP server. */
export interface ServingKms {
  grpcPort: number;
  httpPort: number | undefined;
  /** Stops the servers (admin first, then gRPC with a 5 s grace for calls in flight) and seals the vault. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  config: KmsConfig;
  logger: Logger;
  /** Started (its start-up check passed) before the store is touched. */
  auth: AuthCore;
  store: KeyStore;
  vault: Vault;
  certificate: ServerCertificate | undefined;
  emitter: KeyEventSink;
  peers: KmsPeers;
  /** Whether this process serves the admin HTTP port (one process of the KMS does). */
  admin: boolean;
  /** Registers what `keyChanged` of another process must call here (a worker's cache). */
  onKeyService?: (keys: KeyService) => void;
}

/** Starts @svc/auth's core (its start-up check: the issuer answers) for one serving process. */
export async function startAuth(config: KmsConfig, logger: Logger): Promise<AuthCore> {
  const auth = createAuthCore({ config: config.auth, logger });
  await auth.start();
  return auth;
}

/** Serves the KMS from one process (docs/kms.md "Methods"): the gRPC server and, when `admin`, the HTTP one. */
export async function serveKms(options: ServeOptions): Promise<ServingKms> {
  const { config, logger, auth, vault, emitter, peers, certificate } = options;
  const keys = new KeyService(options.store, vault, peers);
  options.onKeyService?.(keys);
  const unseal = (passphrase: string, outcome: EventOutcome) =>
    recordedUnseal((secret) => peers.unseal(secret), emitter, passphrase, outcome);

  const health = new HealthState("kms", config.instance, "active");
  health.follow({
    role: () => (vault.sealed ? "follower" : "active"),
    holder: () => undefined,
    term: () => undefined,
  });
  const grpc = new Server();
  grpc.addService(
    KmsServiceService,
    kmsServiceImplementation({ auth, keys, vault, emitter, seal: () => peers.seal(), unseal, logger }),
  );
  grpc.addService(HealthService, grpcHealth(health, ["svc.kms.v1.KmsService"]));
  const credentials = certificate
    ? ServerCredentials.createSsl(
        null,
        [{ private_key: Buffer.from(certificate.keyPem), cert_chain: Buffer.from(certificate.certPem) }],
        false,
      )
    : ServerCredentials.createInsecure();
  const grpcPort = await bindGrpc(grpc, `${config.grpcHost}:${config.grpcPort}`, credentials);
  let http: ReturnType<ReturnType<typeof adminApp>["listen"]> | undefined;
  if (options.admin) {
    try {
      http = adminApp(auth, keys, health).listen({
        hostname: config.httpHost,
        port: config.httpPort,
        // Elysia asks Bun for SO_REUSEPORT by default, which lets a second KMS bind a port in use and share its
        // connections: a taken port must fail the start instead.
        reusePort: false,
        ...(certificate ? { tls: { cert: certificate.certPem, key: certificate.keyPem } } : {}),
      });
    } catch (cause) {
      grpc.forceShutdown();
      throw new KmsError(
        "KMS_LISTEN_FAILED",
        `cannot bind the admin HTTP port ${config.httpHost}:${config.httpPort} (SVC_KMS_HTTP_PORT): ${(cause as Error).message}`,
        { subject: "SVC_KMS_HTTP_PORT", cause },
      );
    }
  }
  health.markInitialized();
  return {
    grpcPort,
    httpPort: http ? (http.server?.port ?? config.httpPort) : undefined,
    stop: async () => {
      await http?.stop();
      await stopGrpcServer(grpc, 5_000);
      vault.seal();
    },
  };
}

/**
 * Starts the KMS in this process (docs/kms.md; SVC_KMS_WORKERS=1): audit emitter, key store, bootstrap if allowed,
 * unseal from the secret (recorded), CA export, server certificate, then the gRPC (TLS by default) and admin HTTP
 * servers. `kms-primary.ts` starts the several-process KMS from the same steps.
 */
export async function startKms(config: KmsConfig, options: { logger: Logger }): Promise<Kms> {
  const { logger } = options;
  const emitter = createAuditEmitter(config.audit, { logger });
  const sql = new SQL({ url: config.pgUrl, max: config.pgPool });
  try {
    const auth = await startAuth(config, logger);
    const { store, vault, certificate, unsealMs } = await prepareKms(config, sql, emitter, logger);
    const serving = await serveKms({
      config,
      logger,
      auth,
      store,
      vault,
      certificate,
      emitter,
      peers: singleProcess(vault),
      admin: true,
    });
    let resolveDone: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        await serving.stop();
        await emitter.close();
        await sql.close();
        logger.info({}, "kms stopped");
        resolveDone();
      })();
      return stopping;
    };
    return { grpcPort: serving.grpcPort, httpPort: serving.httpPort ?? config.httpPort, vault, unsealMs, stop, done };
  } catch (error) {
    await sql.close().catch(() => {});
    await emitter.close().catch(() => {});
    throw error;
  }
}
