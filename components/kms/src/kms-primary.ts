import cluster, { type Worker } from "node:cluster";
import { createAuditEmitter } from "@svc/audit-emitter";
import type { RunnableService } from "@svc/common";
import { SQL } from "bun";
import type { Logger } from "pino";
import { fromWire, type PrimaryCommand, toWire, type WireError, type WorkerMessage } from "./cluster-messages.ts";
import type { KmsConfig } from "./config.ts";
import { KmsError } from "./errors.ts";
import { prepareKms } from "./kms.ts";

export interface KmsPrimary extends RunnableService {
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly unsealMs: number;
  /** The workers' process ids, in fork order (the first serves the admin port). */
  readonly workerPids: number[];
}

interface Live {
  worker: Worker;
  /** Commands sent to this worker and not answered yet. */
  waiting: Map<number, (error: WireError | undefined) => void>;
}

/**
 * The primary of a KMS with SVC_KMS_WORKERS = N > 1 (docs/kms.md "Workers"). It does the start's once-only steps
 * (bootstrap, unseal recorded once, CA export, server certificate), then drops the master key and forks N workers
 * (node:cluster: Bun shares one listening socket among them, bound once and exclusively, so port 0 is one port too).
 * It serves nothing itself: it applies every seal, unseal and key change to all workers, one at a time, before the
 * asking worker answers, and writes every worker's key events to the KMS's one audit file. A worker that exits
 * while the KMS runs ends the KMS (the others are stopped, exit 1): no process ever serves with a state the others
 * did not get.
 */
export async function startKmsPrimary(config: KmsConfig, options: { logger: Logger }): Promise<KmsPrimary> {
  const { logger } = options;
  const emitter = createAuditEmitter(config.audit, { logger });
  const sql = new SQL({ url: config.pgUrl, max: config.pgPool });
  let prepared: Awaited<ReturnType<typeof prepareKms>>;
  try {
    prepared = await prepareKms(config, sql, emitter, logger);
  } catch (error) {
    await emitter.close().catch(() => {});
    throw error;
  } finally {
    await sql.close().catch(() => {});
  }
  prepared.vault.seal(); // the primary serves no key: only the workers hold the master key

  const live = new Map<number, Live>();
  let stopping = false;
  let failure: KmsError | undefined;
  let rejectDone: (error: Error) => void = () => {};
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  let rejectStart: (error: KmsError) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    rejectStart = reject;
  });
  failed.catch(() => {});
  const fail = (error: KmsError) => {
    if (failure || stopping) return;
    failure = error;
    for (const { worker } of live.values()) worker.process.kill("SIGTERM");
    rejectStart(error);
    rejectDone(error);
  };

  let nextCommand = 1;
  const command = (target: Live, body: PrimaryCommand) =>
    new Promise<WireError | undefined>((resolve) => {
      const id = nextCommand++;
      target.waiting.set(id, resolve);
      target.worker.send({ t: "command", id, ...body });
    });
  const broadcast = (body: PrimaryCommand, except?: Worker) =>
    Promise.all([...live.values()].filter((one) => one.worker !== except).map((one) => command(one, body)));

  let resolveServing: () => void = () => {};
  const allServing = new Promise<void>((resolve) => {
    resolveServing = resolve;
  });
  // Seals, unseals and key changes run one at a time, and only once every worker serves (a worker still unsealing
  // at its start must not miss a seal).
  let queue: Promise<unknown> = allServing;
  const serialized = (step: () => Promise<void>) => {
    const run = queue.then(step);
    queue = run.catch(() => {});
    return run;
  };
  const everyone = async (body: PrimaryCommand, except?: Worker) => {
    const errors = (await broadcast(body, except)).filter((error) => error !== undefined);
    if (errors.length > 0) throw fromWire(errors[0] as WireError);
  };
  const unsealAll = async (passphrase: string) => {
    const outcomes = await broadcast({ op: "unseal", passphrase });
    const wrong = outcomes.filter((error) => error?.code === "KMS_PASSPHRASE_WRONG").length;
    if (wrong === 0 && outcomes.every((error) => error === undefined)) return;
    if (wrong === outcomes.length) throw fromWire(outcomes[0] as WireError);
    // The workers disagree (none should): seal them all rather than serve half unsealed.
    await everyone({ op: "seal" });
    throw new KmsError("KMS_WORKER_FAILED", "the workers did not all unseal: every worker is sealed again");
  };

  const handle = (from: Live, message: WorkerMessage, ready: (port: number, httpPort?: number) => void) => {
    if (message.t === "hello") {
      from.worker.send({
        t: "start",
        admin: [...live.values()][0] === from,
        ...(prepared.certificate
          ? { certificate: { certPem: prepared.certificate.certPem, keyPem: prepared.certificate.keyPem } }
          : {}),
      });
    } else if (message.t === "serving") ready(message.grpcPort, message.httpPort);
    else if (message.t === "failed") fail(fromWire(message.error));
    else if (message.t === "reply") {
      const resolve = from.waiting.get(message.id);
      from.waiting.delete(message.id);
      resolve?.(message.error);
    } else if (message.t === "request") {
      const { id } = message;
      let work: Promise<void>;
      if (message.op === "record") work = emitter.record(message.kind, message.fields);
      else if (message.op === "seal") work = serialized(() => everyone({ op: "seal" }));
      else if (message.op === "unseal") work = serialized(() => unsealAll(message.passphrase));
      else work = serialized(() => everyone({ op: "forget", tenant: message.tenant, name: message.name }, from.worker));
      work.then(
        () => from.worker.send({ t: "reply", id }),
        (error: unknown) => from.worker.send({ t: "reply", id, error: toWire(error) }),
      );
    }
  };

  let resolveExited: () => void = () => {};
  const allExited = new Promise<void>((resolve) => {
    resolveExited = resolve;
  });
  const ports: { grpc: number; http?: number }[] = [];
  for (let index = 0; index < config.workers; index += 1) {
    const worker = cluster.fork();
    const one: Live = { worker, waiting: new Map() };
    live.set(worker.id, one);
    worker.on("message", (message: WorkerMessage) =>
      handle(one, message, (grpc, http) => {
        ports.push({ grpc, http });
        if (ports.length === config.workers) resolveServing();
      }),
    );
    worker.on("exit", (code, signal) => {
      live.delete(worker.id);
      for (const resolve of one.waiting.values())
        resolve({ code: "KMS_WORKER_FAILED", message: `worker ${worker.process.pid} exited` });
      if (stopping && live.size === 0) resolveExited();
      fail(new KmsError("KMS_WORKER_FAILED", `worker ${worker.process.pid} exited (code ${code}, signal ${signal})`));
    });
  }
  try {
    await Promise.race([allServing, failed]);
  } catch (error) {
    await emitter.close().catch(() => {});
    throw error;
  }
  const grpcPort = ports[0]?.grpc ?? 0;
  if (ports.some((port) => port.grpc !== grpcPort)) {
    const error = new KmsError("KMS_WORKER_FAILED", `workers bound different ports: ${ports.map((p) => p.grpc)}`);
    fail(error);
    throw error;
  }
  const httpPort = ports.find((port) => port.http !== undefined)?.http ?? config.httpPort;
  logger.info({ workers: config.workers }, "kms workers serving");

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      stopping = true;
      if (live.size === 0) resolveExited();
      for (const { worker } of live.values()) worker.send({ t: "stop" });
      await allExited;
      await emitter.close();
      logger.info({}, "kms stopped");
      resolveDone();
    })();
    return stopped;
  };
  return {
    grpcPort,
    httpPort,
    unsealMs: prepared.unsealMs,
    workerPids: [...live.values()].map(({ worker }) => worker.process.pid ?? 0),
    stop,
    done,
  };
}
