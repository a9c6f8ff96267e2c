import { cpuMsOf } from "@svc/stack";
import type { Subprocess } from "bun";
import { BenchError } from "./errors.ts";
import { RssSampler } from "./rss.ts";

export interface TrackedProcess {
  readonly name: string;
  readonly proc: Subprocess<"ignore", "pipe" | "ignore" | number, "pipe">;
  readonly rss: RssSampler;
  readonly startedAt: number;
  /** The last lines of its stderr (and stdout when piped), for error messages. */
  tail(): string;
  /**
   * CPU time (user + system, every thread) used since spawn, in ms: read from /proc while it runs, from its
   * resource usage once it exited.
   */
  cpuMs(): number | undefined;
  /** An error when it exited before we stopped it (for `waitFor`'s `abort`). */
  exitedEarly(): Error | undefined;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the peak RSS in bytes. */
  stop(graceMs?: number): Promise<number>;
  kill9(): Promise<void>;
}

export interface SpawnOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Where stdout goes: a file descriptor (kcat -C writes its records there), or kept (default) for `tail()`. */
  stdout?: number | "ignore";
}

const TAIL_BYTES = 8_192;

/** Every tracked process not reaped yet: what an interrupted run must not leave behind (`killAllTracked`). */
const live = new Set<Subprocess>();

/** SIGKILL to every tracked process still running (an interrupted run: its `finally` blocks will not run). */
export function killAllTracked(): number {
  for (const proc of live) proc.kill("SIGKILL");
  return live.size;
}

/** Spawns a peer or one of our services, samples its RSS, and keeps the end of its output for error messages. */
export function spawnTracked(name: string, argv: string[], options: SpawnOptions = {}): TrackedProcess {
  const proc = Bun.spawn(argv, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdin: "ignore",
    stdout: options.stdout ?? "pipe",
    stderr: "pipe",
  });
  let output = "";
  const keep = (chunk: Uint8Array) => {
    output = (output + new TextDecoder().decode(chunk)).slice(-TAIL_BYTES);
  };
  const drain = async (stream: ReadableStream<Uint8Array> | number | undefined | null) => {
    if (!stream || typeof stream === "number") return;
    for await (const chunk of stream) keep(chunk);
  };
  void drain(proc.stderr).catch(() => undefined);
  void drain(proc.stdout as ReadableStream<Uint8Array> | number | undefined).catch(() => undefined);
  live.add(proc);
  const rss = new RssSampler(proc.pid);
  let stopping = false;
  let peakAtExit: number | undefined;
  // VmHWM as last sampled. Not `resourceUsage().maxRSS`: under Bun 1.4.5 it is the largest of every child this
  // process reaped so far (kcat -C's 1.3 GiB read for each process after it, 2026-11-29), not this child's own.
  void proc.exited.then(() => {
    live.delete(proc);
    peakAtExit = rss.stop();
  });

  return {
    name,
    proc,
    rss,
    startedAt: performance.now(),
    tail: () => output,
    cpuMs: () => cpuMsOf(proc.pid) ?? usedCpuMs(proc),
    exitedEarly: () =>
      proc.exitCode !== null && !stopping
        ? new BenchError("BENCH_STEP_FAILED", `${name} exited with ${proc.exitCode}:\n${output.slice(-2_000)}`, {
            subject: name,
          })
        : undefined,
    async stop(graceMs = 20_000) {
      stopping = true;
      if (proc.exitCode === null && proc.signalCode === null) {
        rss.sample();
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
        await proc.exited;
        clearTimeout(timer);
      }
      return peakAtExit ?? rss.stop();
    },
    async kill9() {
      stopping = true;
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/** CPU time of an exited process, in ms (undefined while it runs). */
function usedCpuMs(proc: Subprocess): number | undefined {
  const usage = proc.exitCode === null && proc.signalCode === null ? undefined : proc.resourceUsage();
  return usage === undefined ? undefined : Number(usage.cpuTime.total) / 1000;
}

/**
 * Runs a command to its end; throws `BENCH_STEP_FAILED` with its output when it fails, or when it has not ended
 * after `timeoutMs` (10 minutes unless given: a peer stuck on a broker that went away must not hang the run).
 */
export async function runToEnd(
  name: string,
  argv: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<{ ms: number; peakRss: number; cpuMs: number | undefined; output: string }> {
  const tracked = spawnTracked(name, argv, options);
  const timeoutMs = options.timeoutMs ?? 600_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    tracked.proc.kill("SIGKILL");
  }, timeoutMs);
  const code = await tracked.proc.exited;
  clearTimeout(timer);
  if (timedOut) {
    throw new BenchError("BENCH_STEP_FAILED", `${name} did not end within ${timeoutMs} ms (killed)`, { subject: name });
  }
  const ms = performance.now() - tracked.startedAt;
  const peakRss = await tracked.stop();
  const cpuMs = tracked.cpuMs();
  if (code !== 0) {
    throw new BenchError("BENCH_STEP_FAILED", `${name} exited with ${code}:\n${tracked.tail().slice(-2_000)}`, {
      subject: name,
    });
  }
  return { ms, peakRss, cpuMs, output: tracked.tail() };
}
