import type { RunnableService } from "@svc/common";
import { SQL } from "bun";
import type { Logger } from "pino";
import {
  fromWire,
  type PrimaryCommand,
  type PrimaryMessage,
  toWire,
  type WorkerMessage,
  type WorkerRequest,
} from "./cluster-messages.ts";
import type { KmsConfig } from "./config.ts";
import { KmsError } from "./errors.ts";
import type { KeyEventSink } from "./key-events.ts";
import type { KeyService } from "./key-service.ts";
import { KeyStore } from "./key-store.ts";
import { serveKms, startAuth } from "./kms.ts";
import type { KmsPeers } from "./kms-peers.ts";
import { Vault } from "./vault.ts";

/** The IPC channel to the primary (node:cluster's `process.send` / `process.on("message")` in a worker). */
export interface PrimaryChannel {
  send(message: WorkerMessage): void;
  onMessage(listener: (message: PrimaryMessage) => void): void;
  /** Called once when the primary is gone (the channel closed). */
  onDisconnect(listener: () => void): void;
}

/** node:cluster's channel of this worker process. */
export function processChannel(): PrimaryChannel {
  return {
    send: (message) => {
      process.send?.(message);
    },
    onMessage: (listener) => {
      process.on("message", (message) => listener(message as PrimaryMessage));
    },
    onDisconnect: (listener) => {
      process.once("disconnect", listener);
    },
  };
}

export interface KmsWorker extends RunnableService {
  readonly grpcPort: number;
  /** The admin port when this worker serves it. */
  readonly httpPort: number | undefined;
  /** Milliseconds this worker's own unseal at start took. */
  readonly unsealMs: number;
}

/**
 * One serving process of a KMS with SVC_KMS_WORKERS > 1 (docs/kms.md "Workers"). The primary bootstrapped, unsealed
 * (recorded once), exported the CA and issued the certificate; this worker unseals from the same secret before it
 * serves, serves the shared gRPC port (and the admin port if the primary says so), sends its seal, unseal and key
 * changes to the primary, which applies them to every worker before answering, and its key events to the primary,
 * which writes them to the KMS's one audit file. The primary gone (channel closed) ends it (exit 1).
 */
export async function startKmsWorker(
  config: KmsConfig,
  options: { logger: Logger; channel: PrimaryChannel },
): Promise<KmsWorker> {
  const { logger, channel } = options;
  let nextId = 1;
  const pending = new Map<number, { resolve: () => void; reject: (error: KmsError) => void }>();
  const request = (body: WorkerRequest) =>
    new Promise<void>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      channel.send({ t: "request", id, ...body });
    });

  let resolveDone: () => void = () => {};
  let rejectDone: (error: Error) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  let start: ((message: Extract<PrimaryMessage, { t: "start" }>) => void) | undefined;
  const started = new Promise<Extract<PrimaryMessage, { t: "start" }>>((resolve) => {
    start = resolve;
  });
  let vault: Vault | undefined;
  let keys: KeyService | undefined;
  let stop: (() => Promise<void>) | undefined;

  const apply = async (command: PrimaryCommand) => {
    if (!vault) throw new KmsError("KMS_WORKER_FAILED", "the worker has not started");
    if (command.op === "seal") vault.seal();
    else if (command.op === "unseal") await vault.unseal(command.passphrase);
    else keys?.forget(command.tenant, command.name);
  };
  channel.onMessage((message) => {
    if (message.t === "start") start?.(message);
    else if (message.t === "reply") {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiting?.reject(fromWire(message.error));
      else waiting?.resolve();
    } else if (message.t === "command") {
      const { t: _t, id, ...command } = message;
      apply(command).then(
        () => channel.send({ t: "reply", id }),
        (error: unknown) => channel.send({ t: "reply", id, error: toWire(error) }),
      );
    } else if (message.t === "stop") {
      void (stop ?? (async () => {}))().then(resolveDone, rejectDone);
    }
  });
  channel.onDisconnect(() => {
    vault?.seal();
    for (const waiting of pending.values()) waiting.reject(new KmsError("KMS_WORKER_FAILED", "the primary is gone"));
    rejectDone(new KmsError("KMS_WORKER_FAILED", "the KMS primary is gone: this worker ends"));
  });

  const peers: KmsPeers = {
    seal: () => request({ op: "seal" }),
    unseal: (passphrase) => request({ op: "unseal", passphrase }),
    keyChanged: (tenant, name) => request({ op: "keyChanged", tenant, name }),
  };
  const events: KeyEventSink = { record: (kind, fields = {}) => request({ op: "record", kind, fields }) };

  const sql = new SQL({ url: config.pgUrl, max: config.pgPool });
  try {
    channel.send({ t: "hello" });
    const { admin, certificate } = await started;
    const auth = await startAuth(config, logger);
    const store = new KeyStore(sql, config.schema);
    vault = new Vault(store);
    // The KMS's unseal at start was recorded once, by the primary; each worker's is the same event's part.
    const unsealStarted = performance.now();
    await vault.unseal(config.passphrase);
    const unsealMs = performance.now() - unsealStarted;
    const serving = await serveKms({
      config,
      logger,
      auth,
      store,
      vault,
      certificate,
      emitter: events,
      peers,
      admin,
      onKeyService: (service) => {
        keys = service;
      },
    });
    let stopping: Promise<void> | undefined;
    stop = () => {
      stopping ??= serving.stop().then(() => sql.close());
      return stopping;
    };
    channel.send({ t: "serving", grpcPort: serving.grpcPort, httpPort: serving.httpPort });
    return { grpcPort: serving.grpcPort, httpPort: serving.httpPort, unsealMs, stop, done };
  } catch (error) {
    channel.send({ t: "failed", error: toWire(error) });
    await sql.close().catch(() => {});
    throw error;
  }
}
