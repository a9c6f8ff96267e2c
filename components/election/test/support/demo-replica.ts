import { join } from "node:path";
import { type Client, credentials, Metadata, makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { readJsonLines, readLines, waitFor } from "@svc/common";
import { DemoService } from "../../demo/demo-service.ts";

const MAIN = join(import.meta.dir, "../../demo/main.ts");

export interface DemoLine {
  event?: string;
  msg?: string;
  at?: number;
  term?: number;
  grpcPort?: number;
  healthPort?: number;
  holder?: string;
  reason?: string;
  [key: string]: unknown;
}

type DemoClient = Client & {
  Work(
    req: unknown,
    md: Metadata,
    options: { deadline: number },
    cb: (e: ServiceError | null, r?: unknown) => void,
  ): void;
};
const DemoClient = makeGenericClientConstructor(DemoService, "Demo") as unknown as new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => DemoClient;

/** One demo replica as a real process: its JSON log lines, its two servers, and signals. */
export class DemoReplica {
  readonly lines: DemoLine[] = [];
  readonly stderr: string[] = [];
  readonly process: ReturnType<typeof Bun.spawn>;
  exitCode: number | null = null;
  private client: DemoClient | undefined;
  private ports: { grpc: number; health: number } | undefined;

  constructor(
    readonly pod: string,
    env: Record<string, string>,
    options: { command?: string[] } = {},
  ) {
    this.process = Bun.spawn([...(options.command ?? []), process.execPath, "run", MAIN], {
      env: { ...process.env, SVC_ELECTION_POD_NAME: pod, SVC_ELECTION_HEALTH_PORT: "0", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    const readFailed = (error: unknown) => this.stderr.push(`[pipe read failed: ${String(error)}]`);
    void readJsonLines<DemoLine>(
      this.process.stdout as ReadableStream<Uint8Array>,
      (line) => this.lines.push(line),
      (text) => this.stderr.push(text),
      readFailed,
    );
    void readLines(this.process.stderr as ReadableStream<Uint8Array>, (line) => this.stderr.push(line), readFailed);
    void this.process.exited.then((code) => {
      this.exitCode = code;
    });
  }

  /** Ends a wait at once when the process died. */
  private dead = () =>
    this.exitCode !== null && this.ports === undefined
      ? new Error(`${this.pod} exited ${this.exitCode}: ${this.stderr.join("\n")}`)
      : undefined;

  async ready(timeoutMs = 20_000): Promise<void> {
    const line = await waitFor(`${this.pod} ready`, async () => this.lines.find((l) => l.event === "ready"), {
      timeoutMs,
      intervalMs: 20,
      abort: this.dead,
    });
    this.ports = { grpc: line.grpcPort ?? 0, health: line.healthPort ?? 0 };
    this.client = new DemoClient(`127.0.0.1:${this.ports.grpc}`, credentials.createInsecure());
  }

  async health(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`http://127.0.0.1:${this.ports?.health}${path}`, {
      signal: AbortSignal.timeout(2000),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** One business call; resolves with the error (UNAVAILABLE on a follower) or the answer. */
  work(id: unknown = 0): Promise<{ error: ServiceError | null; response?: unknown }> {
    const client = this.client;
    if (!client) return Promise.reject(new Error(`${this.pod} is not ready`));
    return new Promise((resolve) =>
      client.Work({ id }, new Metadata(), { deadline: Date.now() + 1000 }, (error, response) =>
        resolve({ error, response }),
      ),
    );
  }

  /** Whether /health/ready says leader (false also when it does not answer). */
  async isLeader(): Promise<boolean> {
    try {
      return (await this.health("/health/ready")).status === 200;
    } catch {
      return false;
    }
  }

  isStarted(): boolean {
    return this.client !== undefined;
  }

  served(): DemoLine[] {
    return this.lines.filter((l) => l.event === "served");
  }

  kill(signal: NodeJS.Signals | number = "SIGKILL"): void {
    if (this.exitCode === null) this.process.kill(signal);
  }

  async stop(): Promise<void> {
    this.client?.close();
    this.kill("SIGKILL");
    await this.process.exited;
  }
}

/**
 * Whether two replicas ever served business calls at overlapping times: each replica's serving spans (first to
 * last served call of each term) must not intersect another replica's.
 */
export function overlappingService(replicas: DemoReplica[]): string[] {
  const spans: { pod: string; term: unknown; from: number; to: number }[] = [];
  for (const replica of replicas) {
    const byTerm = new Map<unknown, number[]>();
    for (const line of replica.served()) {
      const list = byTerm.get(line.term) ?? [];
      list.push(line.at ?? 0);
      byTerm.set(line.term, list);
    }
    for (const [term, times] of byTerm) {
      spans.push({ pod: replica.pod, term, from: Math.min(...times), to: Math.max(...times) });
    }
  }
  const overlaps: string[] = [];
  for (const a of spans) {
    for (const b of spans) {
      if (a.pod < b.pod && a.from <= b.to && b.from <= a.to) {
        overlaps.push(
          `${a.pod}(term ${a.term}) and ${b.pod}(term ${b.term}) both served between ${Math.max(a.from, b.from)} and ${Math.min(a.to, b.to)}`,
        );
      }
    }
  }
  return overlaps;
}

/** Sends business calls to every live replica every `intervalMs` until stopped. */
export function driveTraffic(replicas: () => DemoReplica[], intervalMs = 25): () => Promise<void> {
  let running = true;
  let id = 0;
  const loop = (async () => {
    while (running) {
      await Promise.all(
        replicas()
          .filter((r) => r.exitCode === null && r.isStarted())
          .map((r) => r.work(id++).catch(() => undefined)),
      );
      await Bun.sleep(intervalMs);
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}
