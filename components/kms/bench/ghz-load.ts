// A run of ghz (Go, ops/tools/ghz) against the KMS: the load client that is not the limit (the SDK client in Bun
// costs about as much CPU per call as the KMS itself). Same calls as the SDK rows: TLS with the exported CA, the
// bearer token and x-tenant-id in metadata, closed loop with --concurrency calls in flight over --connections.
import { join } from "node:path";

const PROTO_ROOT = join(import.meta.dir, "../../../proto");

export interface GhzRun {
  ghz: string;
  address: string;
  caPath: string;
  /** `svc.kms.v1.KmsService.Encrypt` etc. */
  call: string;
  /** The request in protobuf's JSON mapping (bytes in base64). */
  data: Record<string, string>;
  metadata: Record<string, string>;
  seconds: number;
  concurrency: number;
  connections: number;
}

export interface GhzResult {
  calls: number;
  /** Calls that failed, other than those in flight when the duration ended (ghz cancels them: `cutAtEnd`). */
  errors: number;
  cutAtEnd: number;
  /** ghz's error texts with their counts (none when every call answered OK). */
  errorKinds: Record<string, number>;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU seconds (user + system) the ghz process used. */
  cpuSeconds: number;
  elapsedSeconds: number;
}

interface GhzReport {
  count: number;
  total: number;
  rps: number;
  latencyDistribution: { percentage: number; latency: number }[] | null;
  statusCodeDistribution: Record<string, number> | null;
  errorDistribution: Record<string, number> | null;
}

export async function runGhz(run: GhzRun): Promise<GhzResult> {
  const child = Bun.spawn(
    [
      run.ghz,
      "--proto",
      join(PROTO_ROOT, "svc/kms/v1/kms.proto"),
      "--import-paths",
      PROTO_ROOT,
      "--call",
      run.call,
      "--cacert",
      run.caPath,
      "--data",
      JSON.stringify(run.data),
      "--metadata",
      JSON.stringify(run.metadata),
      "--duration",
      `${run.seconds}s`,
      "--concurrency",
      String(run.concurrency),
      "--connections",
      String(run.connections),
      "--format",
      "json",
      run.address,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`ghz exited ${code}: ${err}${out.slice(0, 2000)}`);
  const report = JSON.parse(out) as GhzReport;
  const usage = child.resourceUsage();
  const cpuSeconds = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6 : Number.NaN;
  const codes = report.statusCodeDistribution ?? {};
  const ok = codes.OK ?? 0;
  // At the end of --duration ghz cancels the calls in flight and closes its connections under them ("use of closed
  // network connection", "transport is closing"): those are not the KMS's errors.
  const cutAtEnd = Object.entries(report.errorDistribution ?? {})
    .filter(([text]) => /code = Canceled|use of closed network connection|transport is closing/.test(text))
    .reduce((sum, [, count]) => sum + count, 0);
  const latency = (percentage: number) =>
    (report.latencyDistribution?.find((row) => row.percentage === percentage)?.latency ?? 0) / 1e6;
  const elapsedSeconds = report.total / 1e9;
  return {
    calls: ok,
    errors: report.count - ok - cutAtEnd,
    cutAtEnd,
    errorKinds: report.errorDistribution ?? {},
    perSecond: Math.round(ok / elapsedSeconds),
    p50Ms: latency(50),
    p99Ms: latency(99),
    cpuSeconds,
    elapsedSeconds,
  };
}
