import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rejectionsOf } from "@svc/common";
import type { StackContext, StackService } from "./context.ts";
import { killDaemonNow, livePid, stopDaemon } from "./daemon.ts";
import { StackAggregateError, StackError } from "./errors.ts";
import { withInstallLock } from "./install-lock.ts";
import { assertPortsFree } from "./port-check.ts";
import { awaitReady, readinessOf } from "./server-readiness.ts";
import { ALL_SERVICES, OPTIONAL_SERVICES, SERVICES, SERVICES_FLAG } from "./services/index.ts";
import { pidFileOf } from "./state-files.ts";
import { acquireUpLock } from "./up-lock.ts";

export interface ServiceTiming {
  name: string;
  /** Seconds spent fetching or building (near 0 when cached). */
  installSeconds: number;
  /** Seconds from spawn to really ready (0 when it was running already). */
  startSeconds: number;
  alreadyRunning: boolean;
}

export interface StackUp {
  env: Record<string, string>;
  envFile: string;
  timings: ServiceTiming[];
}

/** What `up --kms` / `up --kms-audit` add to the named services. */
export interface OptionalSelection {
  /** The KMS. */
  kms?: boolean;
  /** The KMS with its audit instance (agent and queue-consumer); implies `kms`. */
  kmsAudit?: boolean;
  /** The HA components and endpoints: two replicas each, and the endpoints' audit pipeline (SERVICES_FLAG). */
  services?: boolean;
}

/** The servers each flag adds. */
const KMS_SERVICES = ["kms"] as const;
export const KMS_AUDIT_SERVICES = ["kms", "kms-audit-agent", "kms-audit-consumer"] as const;

/**
 * The named services and what they start after; every default service when no name is given. The optional ones
 * (the KMS and its audit instance) only when named or asked for by a flag: `kmsAudit` implies `kms`.
 */
export function selectServices(names: readonly string[], optional: OptionalSelection = {}): readonly StackService[] {
  const wanted = new Set<string>();
  const add = (name: string) => {
    const service = ALL_SERVICES.find((s) => s.name === name);
    if (!service) {
      const known = ALL_SERVICES.map((s) => s.name).join(", ");
      throw new StackError("STACK_CONFIG_INVALID", `unknown service ${name} (known: ${known})`, name);
    }
    wanted.add(name);
    for (const dependency of service.after) add(dependency);
  };
  for (const name of names.length === 0 ? SERVICES.map((s) => s.name) : names) add(name);
  if (optional.kms) for (const name of KMS_SERVICES) add(name);
  if (optional.kmsAudit) for (const name of KMS_AUDIT_SERVICES) add(name);
  if (optional.services) for (const service of SERVICES_FLAG) add(service.name);
  return ALL_SERVICES.filter((s) => wanted.has(s.name));
}

/** The optional servers whose pid file exists: started by an `up` and not stopped by `down` since. */
const startedOptional = (ctx: StackContext) => OPTIONAL_SERVICES.filter((s) => existsSync(pidFileOf(ctx, s.name)));

export const envFilePath = (stateDir: string) => join(stateDir, "stack.env");
const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;

/**
 * Installs everything into the cache. The Go builds run one after another (each one uses every core), beside
 * the downloads.
 */
export async function installAll(ctx: StackContext, services = SERVICES): Promise<Map<string, number>> {
  const took = new Map<string, number>();
  const run = async (service: StackService) => {
    const started = performance.now();
    const task = ctx.progress.task(`install ${service.name}`, 3);
    await withInstallLock(ctx.cacheDir, service.name, () => service.install(ctx, task), {
      onWait: (pid) => task.note(`waiting for pid ${pid}, which is installing ${service.name} into the same cache`),
    });
    took.set(service.name, seconds(started));
  };
  const goBuilt = new Set(["etcd", "kube-apiserver", "minio"]);
  const sequential = (async () => {
    for (const service of services.filter((s) => goBuilt.has(s.name))) await run(service);
  })();
  await Promise.all([sequential, ...services.filter((s) => !goBuilt.has(s.name)).map(run)]);
  return took;
}

function writeEnvFile(ctx: StackContext, services: readonly StackService[]): Record<string, string> {
  const env: Record<string, string> = { SVC_STACK_STATE_DIR: ctx.stateDir };
  for (const service of services) Object.assign(env, service.exports(ctx));
  const text = Object.entries(env)
    .map(([key, value]) => `${key}=${value}`)
    .join("\n");
  writeFileSync(envFilePath(ctx.stateDir), `${text}\n`, { mode: 0o600 });
  return env;
}

export function readEnvFile(stateDir: string): Record<string, string> | undefined {
  const file = envFilePath(stateDir);
  if (!existsSync(file)) return undefined;
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const at = line.indexOf("=");
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

/**
 * Installs, starts what is not running yet (dependencies first), provisions, and writes the env file of addresses.
 * One `up` at a time per state directory (the `up.lock` file). Before anything is spawned, every port of every
 * server to start must be free. A server of this stack that runs but is not ready yet is waited for, never
 * started a second time.
 */
export async function up(ctx: StackContext, services = SERVICES): Promise<StackUp> {
  for (const sub of ["logs", "pids"]) mkdirSync(join(ctx.stateDir, sub), { recursive: true });
  const release = acquireUpLock(ctx.stateDir);
  try {
    return await upLocked(ctx, services);
  } finally {
    release();
    ctx.progress.stop();
  }
}

async function upLocked(ctx: StackContext, services: readonly StackService[]): Promise<StackUp> {
  await assertPortsFreeForStart(ctx, services);
  const installed = await installAll(ctx, services);
  const timings: ServiceTiming[] = [];
  const started: StackService[] = [];
  const pending = new Map(services.map((s) => [s.name, s]));
  const done = new Set<string>();
  try {
    while (pending.size > 0) {
      const wave = [...pending.values()].filter((s) => s.after.every((d) => done.has(d) || !pending.has(d)));
      // allSettled: when one server fails, the others of the wave finish starting before everything started is
      // stopped, so none is left running behind the error.
      const outcomes = await Promise.allSettled(
        wave.map(async (service) => {
          const t0 = performance.now();
          const running = await adoptRunning(ctx, service);
          if (!running) {
            started.push(service);
            await service.start(ctx, ctx.progress.task(`start ${service.name}`, 3));
          }
          await service.provision?.(ctx, ctx.progress.task(`provision ${service.name}`, 1));
          timings.push({
            name: service.name,
            installSeconds: installed.get(service.name) ?? 0,
            startSeconds: running ? 0 : seconds(t0),
            alreadyRunning: running,
          });
        }),
      );
      const failures = rejectionsOf(outcomes);
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) {
        throw new StackAggregateError(failures, `${failures.length} servers failed to start`);
      }
      for (const service of wave) {
        pending.delete(service.name);
        done.add(service.name);
      }
    }
    // A group of servers (the HA components) is up once it is in its expected state, not when each one answers.
    for (const group of new Set(services.flatMap((s) => (s.group ? [s.group] : [])))) {
      const t0 = performance.now();
      await group.settle(
        ctx,
        services.filter((s) => s.group === group),
        ctx.progress.task(`settle ${group.name}`, 1),
      );
      timings.push({ name: group.name, installSeconds: 0, startSeconds: seconds(t0), alreadyRunning: false });
    }
  } catch (error) {
    await Promise.all(started.map((s) => stopDaemon(pidFileOf(ctx, s.name))));
    throw error;
  }
  // Every server's address, not only the ones started now: `up keycloak` must not hide the others (nor the KMS
  // that an earlier `up --kms` started).
  const env = writeEnvFile(ctx, [...SERVICES, ...startedOptional(ctx)]);
  return { env, envFile: envFilePath(ctx.stateDir), timings };
}

/** Fails, before anything is spawned, when a port of a server that is not running is taken; names every one. */
async function assertPortsFreeForStart(ctx: StackContext, services: readonly StackService[]): Promise<void> {
  const toStart = services.filter((s) => livePid(pidFileOf(ctx, s.name)) === undefined);
  const failures = rejectionsOf(await Promise.allSettled(toStart.map((s) => assertPortsFree(s.name, s.ports(ctx)))));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new StackAggregateError(failures, `${failures.length} servers cannot start`);
}

/**
 * Whether this stack's server runs already (its pid file names a live process) and is ready; one that is not
 * ready yet is waited for (up to its start timeout) instead of being started a second time, and fails with
 * STACK_NOT_READY if it never gets there. False when none runs, or it exited while being waited for.
 */
async function adoptRunning(ctx: StackContext, service: StackService): Promise<boolean> {
  const pidFile = pidFileOf(ctx, service.name);
  const pid = livePid(pidFile);
  if (pid === undefined) return false;
  if ((await readinessOf(ctx, service, pid))?.ours) return true;
  const task = ctx.progress.task(`wait ${service.name}`, 1);
  task.update(0, `pid ${pid} runs but is not ready yet`);
  const exited = new StackError("STACK_START_FAILED", `${service.name} (pid ${pid}) exited`, service.name);
  try {
    await awaitReady(ctx, service, pid, () => (livePid(pidFile) === pid ? undefined : exited));
    task.done(`pid ${pid} is ready`);
    return true;
  } catch (error) {
    if (error !== exited) throw error;
    task.done(`pid ${pid} exited; starting it again`);
    return false;
  }
}

/**
 * Stops every server of the stack, newest first, and removes its env file; with `services`, only the component
 * replicas and the endpoints' audit pipeline (`up --services`), and the stack stays up (its env file too).
 */
export async function down(
  ctx: StackContext,
  options: { purge?: boolean; services?: boolean } = {},
): Promise<string[]> {
  if (options.purge && options.services) {
    throw new StackError(
      "STACK_CONFIG_INVALID",
      "down: --purge stops the whole stack; it cannot go with --services",
      "--purge",
    );
  }
  const stopped: string[] = [];
  const which = options.services ? SERVICES_FLAG : ALL_SERVICES;
  for (const service of [...which].reverse()) {
    if (await stopDaemon(pidFileOf(ctx, service.name))) stopped.push(service.name);
  }
  if (options.services) return stopped;
  rmSync(envFilePath(ctx.stateDir), { force: true });
  if (options.purge) {
    for (const service of SERVICES) {
      for (const path of service.externalData?.(ctx) ?? []) rmSync(path, { recursive: true, force: true });
    }
    rmSync(ctx.stateDir, { recursive: true, force: true });
  }
  return stopped;
}

/** Synchronous last resort for a test run that is exiting: kill every server of this stack at once. */
export function killAllNow(stateDir: string): void {
  for (const service of ALL_SERVICES) killDaemonNow(join(stateDir, "pids", `${service.name}.pid`));
}

export interface ServiceStatus {
  name: string;
  address: string;
  state: "ready" | "running, not ready" | "stopped";
  pid: number | undefined;
  /** A running replica's HA role (leader, follower, active), for the servers that have one. */
  role?: string;
}

/** Every default server, and each optional one that was started (see `startedOptional`). */
export async function status(ctx: StackContext): Promise<ServiceStatus[]> {
  return Promise.all(
    [...SERVICES, ...startedOptional(ctx)].map(async (service) => {
      const pid = livePid(pidFileOf(ctx, service.name));
      const alive = pid !== undefined;
      const ready = alive && (await readinessOf(ctx, service, pid))?.ours === true;
      const state = ready ? "ready" : alive ? "running, not ready" : "stopped";
      const role = alive && service.role ? { role: await service.role(ctx) } : {};
      return { name: service.name, address: service.address(ctx), state, pid: alive ? pid : undefined, ...role };
    }),
  );
}
