import type { StackConfig } from "./config.ts";
import type { RunningDaemon } from "./daemon.ts";
import type { Progress, ProgressTask } from "./progress.ts";

export interface StackContext {
  config: StackConfig;
  env: Record<string, string | undefined>;
  /** Fetched and built artifacts, shared by every stack on the machine. */
  cacheDir: string;
  /** This stack's data, logs, pid files and env file. */
  stateDir: string;
  progress: Progress;
}

/** How long a server may take from spawn to ready, and how often it is probed meanwhile. */
export interface Readiness {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
}

/** One server of the local stack. */
export interface StackService {
  readonly name: string;
  /** Services that must be ready before this one starts. */
  readonly after: readonly string[];
  /** Start timeout and probe interval; also bounds the wait for a server that runs but is not ready yet. */
  readonly readiness: Readiness;
  /**
   * Every loopback port the server listens on; each must be free before it is spawned. The first one is the port
   * `probe` talks to.
   */
  ports(ctx: StackContext): readonly number[];
  /** Fetches or builds what the service runs into the cache; fast when cached. */
  install(ctx: StackContext, task: ProgressTask): Promise<void>;
  /** Starts the server and resolves once it really serves (and its initial objects exist). */
  start(ctx: StackContext, task: ProgressTask): Promise<RunningDaemon>;
  /**
   * Creates what clients expect to exist (topics, say) once the server is ready, whether it was started now or
   * was running already; idempotent.
   */
  provision?(ctx: StackContext, task: ProgressTask): Promise<void>;
  /** One quick readiness check of a server that may have been started by another process. */
  probe(ctx: StackContext): Promise<boolean>;
  /** Human-readable address for `status`. */
  address(ctx: StackContext): string;
  /** The SVC_STACK_* variables clients use to reach it. */
  exports(ctx: StackContext): Record<string, string>;
  /** Data kept outside the state directory, deleted by `down --purge`. */
  externalData?(ctx: StackContext): string[];
}
