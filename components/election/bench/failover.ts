// bench:failover — failover of @svc/election's k8s-lease backend beside client-go's own leader election, on the
// stack's kube-apiserver, in one run: kill -9 loops (time from the kill to the other replica's became-leader),
// graceful handovers (SIGTERM), and simultaneous starts. Two processes per run, a namespace of their own.
// Goals (issue 9): p50 and max ≤ 7 s for 6/4/1 and ≤ 17 s for 15/10/2; handover ≤ 1 s; 0 ms of two leaders serving.
import { readLines } from "@svc/common";
import { loadKubeConfig } from "@svc/kube";
import { createTestNamespace, ensureTool, leaseName, stackEnv } from "@svc/testkit";
import { DemoReplica, driveTraffic, overlappingService } from "../test/support/demo-replica.ts";

interface Line {
  event?: string;
  time?: number;
  [key: string]: unknown;
}

interface Contender {
  readonly pod: string;
  readonly lines: Line[];
  readonly process: { exited: Promise<number> };
  exitCode: number | null;
  ready(timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
  stop(): Promise<void>;
}

type Timings = [number, number, number];

interface Args {
  kills: number;
  handovers: number;
  races: number;
  timings: Timings[];
  impls: ("ours" | "client-go")[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    kills: 30,
    handovers: 5,
    races: 20,
    timings: [
      [6, 4, 1],
      [15, 10, 2],
    ],
    impls: ["ours", "client-go"],
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1] ?? "";
    const int = () => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new Error(`${flag}: expected a count, got ${value}`);
      i++;
      return n;
    };
    if (flag === "--kills") args.kills = int();
    else if (flag === "--handovers") args.handovers = int();
    else if (flag === "--races") args.races = int();
    else if (flag === "--timings") {
      args.timings = value.split(",").map((t) => {
        const parts = t.split("/").map(Number);
        if (parts.length !== 3 || parts.some((p) => !(p > 0))) throw new Error(`--timings: bad ${t}`);
        return parts as Timings;
      });
      i++;
    } else if (flag === "--impl") {
      args.impls = value.split(",").map((v) => {
        if (v !== "ours" && v !== "client-go") throw new Error(`--impl: ours or client-go, got ${v}`);
        return v;
      });
      i++;
    } else
      throw new Error(
        `unknown flag ${flag} (--kills N --handovers N --races N --timings 6/4/1,15/10/2 --impl ours,client-go)`,
      );
  }
  return args;
}

class PeerReplica implements Contender {
  readonly lines: Line[] = [];
  readonly process: ReturnType<typeof Bun.spawn>;
  exitCode: number | null = null;

  constructor(
    binary: string,
    readonly pod: string,
    options: { kubeconfig: string; namespace: string; lease: string; timings: Timings },
  ) {
    const [lease, renew, retry] = options.timings;
    this.process = Bun.spawn(
      [
        binary,
        `-kubeconfig=${options.kubeconfig}`,
        `-namespace=${options.namespace}`,
        `-name=${options.lease}`,
        `-id=${pod}`,
        `-lease=${lease}`,
        `-renew=${renew}`,
        `-retry=${retry}`,
      ],
      { stdout: "pipe", stderr: "ignore" },
    );
    // client-go's example prints one JSON line per event; a line it did not write as JSON (a panic) fails the run.
    void readLines(
      this.process.stdout as ReadableStream<Uint8Array>,
      (line) => this.lines.push(JSON.parse(line) as Line),
      (error) => console.error(`${pod}: its output could not be read: ${String(error)}`),
    );
    void this.process.exited.then((code) => {
      this.exitCode = code;
    });
  }

  async ready(timeoutMs = 20_000): Promise<void> {
    await until(`${this.pod} ready`, () => this.lines.some((l) => l.event === "ready"), timeoutMs);
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    if (this.exitCode === null) this.process.kill(signal);
  }

  async stop(): Promise<void> {
    this.kill("SIGKILL");
    await this.process.exited;
  }
}

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(5);
  }
}

const lastEvent = (c: Contender, event: string) => c.lines.filter((l) => l.event === event).at(-1);
const eventsSince = (c: Contender, event: string, since: number) =>
  c.lines.filter((l) => l.event === event && (l.time ?? 0) >= since);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const seconds = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : "—");
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Row {
  impl: string;
  timings: string;
  failovers: number[];
  handovers: number[];
  overlaps: number | undefined;
}

async function runPair(
  impl: "ours" | "client-go",
  timings: Timings,
  args: Args,
  env: { kubeconfig: string; peer: string | undefined },
): Promise<Row> {
  const admin = loadKubeConfig(env.kubeconfig);
  const ns = await createTestNamespace(admin, "bench-failover");
  const lease = leaseName("failover");
  const all: Contender[] = [];
  const spawn = (pod: string): Contender => {
    const contender: Contender =
      impl === "ours"
        ? new DemoReplica(pod, {
            SVC_ELECTION_COMPONENT: "orchestrator",
            SVC_ELECTION_BACKEND: "k8s-lease",
            SVC_ELECTION_NAMESPACE: ns.name,
            SVC_ELECTION_KUBECONFIG: env.kubeconfig,
            SVC_ELECTION_LOCK_NAME: lease,
            SVC_ELECTION_LABEL_PODS: "false",
            SVC_ELECTION_LEASE_DURATION_SECONDS: String(timings[0]),
            SVC_ELECTION_RENEW_DEADLINE_SECONDS: String(timings[1]),
            SVC_ELECTION_RETRY_PERIOD_SECONDS: String(timings[2]),
          })
        : new PeerReplica(env.peer ?? "", pod, { kubeconfig: env.kubeconfig, namespace: ns.name, lease, timings });
    all.push(contender);
    return contender;
  };
  const label = `${impl} ${timings.join("/")}`;
  const row: Row = { impl, timings: timings.join("/"), failovers: [], handovers: [], overlaps: undefined };
  const stopTraffic =
    impl === "ours" ? driveTraffic(() => all.filter((c): c is DemoReplica => c instanceof DemoReplica)) : undefined;
  try {
    let pair = [spawn(`${lease}-a`), spawn(`${lease}-b`)];
    await Promise.all(pair.map((c) => c.ready()));
    const limitMs = (timings[0] * 3 + 15) * 1000;
    await until("a first leader", () => pair.some((c) => lastEvent(c, "became-leader")), limitMs);

    const handOver = async (signal: NodeJS.Signals, into: number[], n: number) => {
      const leader = pair.find((c) => c.exitCode === null && lastEvent(c, "became-leader")) as Contender;
      const other = pair.find((c) => c !== leader) as Contender;
      const t0 = Date.now();
      leader.kill(signal);
      await until(
        `${label}: ${other.pod} to lead (${signal} #${n})`,
        () => eventsSince(other, "became-leader", t0).length > 0,
        limitMs,
      );
      const took = (eventsSince(other, "became-leader", t0)[0]?.time ?? Number.NaN) - t0;
      into.push(took);
      log(`${label}: ${signal} #${n}: ${seconds(took)} s`);
      await leader.process.exited;
      const restarted = spawn(leader.pod);
      await restarted.ready();
      // A follower again once it has seen the holder (both implementations report it).
      await until(
        `${restarted.pod} to observe the leader`,
        () => restarted.lines.some((l) => l.event === "new-leader-observed"),
        limitMs,
      );
      pair = [other, restarted];
    };
    for (let i = 1; i <= args.kills; i++) await handOver("SIGKILL", row.failovers, i);
    for (let i = 1; i <= args.handovers; i++) await handOver("SIGTERM", row.handovers, i);
  } finally {
    await stopTraffic?.();
    if (impl === "ours") row.overlaps = overlappingService(all as DemoReplica[]).length;
    await Promise.all(all.map((c) => c.stop()));
    await ns.remove();
  }
  return row;
}

/** Both replicas started at the same instant on a fresh Lease, `rounds` times: how many rounds had one leader. */
async function races(rounds: number, kubeconfig: string): Promise<{ rounds: number; oneLeader: number }> {
  const ns = await createTestNamespace(loadKubeConfig(kubeconfig), "bench-race");
  let oneLeader = 0;
  try {
    for (let round = 1; round <= rounds; round++) {
      const lease = leaseName("race");
      const pair = [`${lease}-a`, `${lease}-b`].map(
        (pod) =>
          new DemoReplica(pod, {
            SVC_ELECTION_COMPONENT: "orchestrator",
            SVC_ELECTION_BACKEND: "k8s-lease",
            SVC_ELECTION_NAMESPACE: ns.name,
            SVC_ELECTION_KUBECONFIG: kubeconfig,
            SVC_ELECTION_LOCK_NAME: lease,
            SVC_ELECTION_LABEL_PODS: "false",
          }),
      );
      try {
        await Promise.all(pair.map((r) => r.ready()));
        // Both made their first attempt before `ready`; one more retry period settles any conflict.
        await Bun.sleep(1500);
        const leaders = pair.flatMap((r) => r.lines.filter((l) => l.event === "became-leader")).length;
        if (leaders === 1) oneLeader++;
        log(`race #${round}: ${leaders} leader(s)`);
      } finally {
        await Promise.all(pair.map((r) => r.stop()));
      }
    }
  } finally {
    await ns.remove();
  }
  return { rounds, oneLeader };
}

const args = parseArgs(process.argv.slice(2));
const kubeconfig = stackEnv().kubeconfig;
if (args.impls.includes("client-go"))
  log("bench:failover: the client-go peer (ops/tools/leader-peer; built on first use)");
const peer = args.impls.includes("client-go") ? await ensureTool("leader-peer") : undefined;
log(`bench:failover: ${args.kills} kill -9 and ${args.handovers} SIGTERM handovers per row, ${args.races} races`);
const rows: Row[] = [];
for (const timings of args.timings) {
  for (const impl of args.impls) rows.push(await runPair(impl, timings, args, { kubeconfig, peer }));
}
const race = args.races > 0 ? await races(args.races, kubeconfig) : undefined;

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${seconds(percentile(sorted, 50))} / ${seconds(percentile(sorted, 90))} / ${seconds(sorted.at(-1) ?? Number.NaN)}`;
};
console.log(
  "| impl | lease/renew/retry s | kill -9 failover p50 / p90 / max s (n) | SIGTERM handover p50 / p90 / max s (n) | two serving |",
);
console.log("| --- | --- | --- | --- | --- |");
for (const row of rows) {
  console.log(
    `| ${row.impl} | ${row.timings} | ${stats(row.failovers)} (${row.failovers.length}) | ${stats(row.handovers)} (${row.handovers.length}) | ${row.overlaps === undefined ? "n/a" : `${row.overlaps} overlaps`} |`,
  );
}
if (race)
  console.log(`\nsimultaneous starts (ours, 6/4/1): ${race.oneLeader}/${race.rounds} rounds with exactly one leader`);
process.exit(0);
