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
  /** A replica's HA role (leader, follower, active) for `status`, asked only while it runs. */
  role?(ctx: StackContext): Promise<string>;
  /** Servers that form one deployment: `up` waits for the group's state once each of them is ready. */
  readonly group?: ServiceGroup;
}

/** Several servers that only together reach a state worth waiting for (the HA components: one leader each). */
export interface ServiceGroup {
  readonly name: string;
  /** Resolves once the group's `members` (those `up` was given) are in their expected state; fails naming why not. */
  settle(ctx: StackContext, members: readonly StackService[], task: ProgressTask): Promise<void>;
}
