/** A started service as `main.ts` drives it. */
export interface RunnableService {
  /** Graceful stop; rejects when it did not finish (the process then exits 1). */
  stop(): Promise<void>;
  /** Settles when the service is over by itself: resolves on a clean end, rejects on a fatal error. */
  readonly done: Promise<void>;
}

/** The part of a pino logger `runService` uses. */
export interface ServiceLogger {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
  fatal(fields: object, message: string): void;
}

export const SERVICE_EXIT = { ok: 0, failed: 1, badConfig: 2 } as const;

export interface RunServiceOptions<C, S extends RunnableService, L extends ServiceLogger> {
  /** The name printed before a bad setting's message. */
  name: string;
  /** Reads and checks the settings; a throw is a bad setting (exit 2, message on stderr). */
  parseConfig: () => C;
  /** Makes the logger once the settings are valid. */
  createLogger: (config: C) => L;
  /** Starts the service; large clients are best imported in here, so a bad setting is reported without them. */
  start: (config: C, logger: L) => Promise<S>;
  /** Logged once the service runs. */
  started?: (service: S, config: C) => Record<string, unknown>;
  /** Defaults: `process.exit`, `process.stderr`, `process` (its SIGTERM/SIGINT/SIGHUP). Tests replace them. */
  exit?: (code: number) => void;
  stderr?: { write(text: string): unknown };
  signals?: {
    once(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
    on(signal: "SIGHUP", listener: () => void): unknown;
  };
}

/**
 * The life of a service process, the same for every `main.ts`: settings (exit 2 naming the bad one), start (exit 1
 * when it fails), SIGTERM/SIGINT → graceful stop (exit 0, or 1 when the stop failed, logged "shutdown incomplete"),
 * a service that ends by itself exits 0 or 1 as it ended. Once a stop has begun, only its outcome decides the exit:
 * a `done` that resolves meanwhile (a service that settles `done` as its stop ends, failed or not) does not exit 0
 * before it. SIGHUP is logged and ignored: its default action ends the process, and a rotator's `postrotate kill
 * -HUP` would then stop the service; no service reloads anything on it (a file is followed by its path). A signal
 * listener does not keep the process alive by itself.
 */
export async function runService<C, S extends RunnableService, L extends ServiceLogger>(
  options: RunServiceOptions<C, S, L>,
): Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const stderr = options.stderr ?? process.stderr;
  const signals = options.signals ?? process;
  let config: C;
  try {
    config = options.parseConfig();
  } catch (error) {
    stderr.write(`${options.name}: ${(error as Error).message}\n`);
    exit(SERVICE_EXIT.badConfig);
    return;
  }
  const logger = options.createLogger(config);
  // Before start: a rotator's SIGHUP during a long start (the KMS unsealing) must not end the process either.
  signals.on("SIGHUP", () => logger.info({ signal: "SIGHUP" }, "SIGHUP ignored: nothing is reloaded on it"));
  let service: S;
  try {
    service = await options.start(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, `${options.name} did not start`);
    exit(SERVICE_EXIT.failed);
    return;
  }
  logger.info(options.started?.(service, config) ?? {}, `${options.name} started`);
  let stopping = false;
  const shutdown = (signal: string) => {
    stopping = true;
    logger.info({ signal }, "shutting down");
    service.stop().then(
      () => exit(SERVICE_EXIT.ok),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown incomplete");
        exit(SERVICE_EXIT.failed);
      },
    );
  };
  signals.once("SIGTERM", () => shutdown("SIGTERM"));
  signals.once("SIGINT", () => shutdown("SIGINT"));
  service.done.then(
    () => {
      // A stop under way settles the exit code: its failure must not become an exit 0.
      if (!stopping) exit(SERVICE_EXIT.ok);
    },
    (error: unknown) => {
      logger.fatal({ err: error }, `${options.name} failed`);
      exit(SERVICE_EXIT.failed);
    },
  );
}
