import { readJsonLines, readLines, waitFor } from "@svc/common";
import { metricValue } from "./metric-samples.ts";

/** `text` as a JSON value, or undefined when it is not JSON. */
function jsonLine(text: string): ReplicaLine | undefined {
  try {
    return JSON.parse(text) as ReplicaLine;
  } catch {
    return undefined;
  }
}

/** One JSON log line of a replica (pino): `event` marks the lines tests wait for. */
export interface ReplicaLine {
  event?: string;
  msg?: string;
  at?: number;
  term?: number;
  grpcPort?: number;
  healthPort?: number;
  level?: number;
  [key: string]: unknown;
}

/**
 * A component replica as a real process (`bun run <main>`), for tests and the failover bench: its JSON log lines,
 * its ports from the `ready` line, its health endpoints, and signals (kill -9, SIGSTOP/SIGCONT, SIGTERM).
 */
export class ReplicaProcess {
  /**
   * The JSON lines of stdout and of stderr, in the order they arrived: the logs (on stdout, or on stderr when stdout
   * carries endpoint's audit records) and those audit records.
   */
  readonly lines: ReplicaLine[] = [];
  /** Every line of stdout as written, JSON or not (a test of what the stream holds). */
  readonly stdoutLines: string[] = [];
  /** The lines of either stream that are not JSON (a crash trace, a runtime warning). */
  readonly stderr: string[] = [];
  readonly process: ReturnType<typeof Bun.spawn>;
  exitCode: number | null = null;
  grpcPort = 0;
  healthPort = 0;

  constructor(
    readonly pod: string,
    main: string,
    env: Record<string, string>,
  ) {
    this.process = Bun.spawn([process.execPath, "run", main], {
      env: {
        ...process.env,
        SVC_POD_NAME: pod,
        SVC_HEALTH_PORT: "0",
        SVC_GRPC_PORT: "0",
        SVC_HOST: "127.0.0.1",
        ...env,
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const readFailed = (error: unknown) => this.stderr.push(`[pipe read failed: ${String(error)}]`);
    void readLines(
      this.process.stdout as ReadableStream<Uint8Array>,
      (text) => {
        this.stdoutLines.push(text);
        const line = jsonLine(text);
        if (line) this.lines.push(line);
        else this.stderr.push(text);
      },
      readFailed,
    );
    void readJsonLines<ReplicaLine>(
      this.process.stderr as ReadableStream<Uint8Array>,
      (line) => this.lines.push(line),
      (text) => this.stderr.push(text),
      readFailed,
    );
    void this.process.exited.then((code) => {
      this.exitCode = code;
    });
  }

  private dead = () =>
    this.exitCode !== null
      ? new Error(
          `${this.pod} exited ${this.exitCode}: ${[...this.stderr, ...this.lines.map((l) => JSON.stringify(l))].slice(-20).join("\n")}`,
        )
      : undefined;

  /** Waits for the `ready` line and takes the ports from it. */
  async ready(timeoutMs = 20_000): Promise<void> {
    const line = await this.waitForLine((l) => l.event === "ready", timeoutMs);
    this.grpcPort = line.grpcPort ?? 0;
    this.healthPort = line.healthPort ?? 0;
  }

  /** The first log line `match` accepts, waiting for it (fails at once when the process exited). */
  waitForLine(match: (line: ReplicaLine) => boolean, timeoutMs = 20_000): Promise<ReplicaLine> {
    return waitFor(`${this.pod}: log line`, async () => this.lines.find(match), {
      timeoutMs,
      intervalMs: 20,
      abort: this.dead,
    });
  }

  get address(): string {
    return `127.0.0.1:${this.grpcPort}`;
  }

  async health(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`http://127.0.0.1:${this.healthPort}${path}`, { signal: AbortSignal.timeout(2000) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** `/metrics` of the health port (Prometheus text). */
  async metricsText(): Promise<string> {
    const response = await fetch(`http://127.0.0.1:${this.healthPort}/metrics`, { signal: AbortSignal.timeout(2000) });
    if (response.status !== 200) throw new Error(`${this.pod}: /metrics answered ${response.status}`);
    return response.text();
  }

  /** The sum of the samples of metric `name` whose labels include `labels` (0 when there is none). */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return metricValue(await this.metricsText(), name, labels) ?? 0;
  }

  /** Whether `/health/ready` says 200 (false also when it does not answer). */
  async isLeader(): Promise<boolean> {
    if (this.exitCode !== null) return false;
    try {
      return (await this.health("/health/ready")).status === 200;
    } catch {
      return false;
    }
  }

  signal(signal: NodeJS.Signals | number): void {
    if (this.exitCode === null) this.process.kill(signal);
  }

  async stop(): Promise<void> {
    this.signal("SIGCONT");
    this.signal("SIGKILL");
    await this.process.exited;
  }
}

/** Waits until exactly one of `replicas` answers 200 on /health/ready, and returns it. */
export function leaderAmong(replicas: readonly ReplicaProcess[], timeoutMs = 20_000): Promise<ReplicaProcess> {
  return waitFor(
    "exactly one leader",
    async () => {
      const live = replicas.filter((r) => r.exitCode === null);
      const roles = await Promise.all(live.map((r) => r.isLeader()));
      return roles.filter(Boolean).length === 1 ? live[roles.indexOf(true)] : undefined;
    },
    { timeoutMs, intervalMs: 50 },
  );
}
