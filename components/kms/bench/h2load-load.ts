// A run of h2load (nghttp2's HTTP/2 load generator, C; Debian's nghttp2-client) sending one gRPC request body over
// and over: a probe of the KMS's ceiling with a client that costs far less CPU per call than the SDK. It is not a
// gRPC client: it does not verify the server certificate, and it counts an HTTP 200 as success without reading the
// grpc-status trailer, so a refused call would count as a fast success; the bench checks the KMS's own count of OK
// answers against it (server-calls.ts).

export interface H2loadRun {
  h2load: string;
  /** `https://127.0.0.1:<port>/svc.kms.v1.KmsService/Encrypt` */
  url: string;
  /** The protobuf request, without the gRPC frame. */
  message: Uint8Array;
  headers: Record<string, string>;
  seconds: number;
  concurrency: number;
  connections: number;
  dir: string;
}

export interface H2loadResult {
  calls: number;
  errors: number;
  perSecond: number;
  meanMs: number;
  maxMs: number;
  cpuSeconds: number;
  elapsedSeconds: number;
  /** Calls h2load kept in flight: its streams per connection (concurrency / connections, rounded up) × connections. */
  inFlight: number;
}

/** The gRPC length-prefixed message: flag 0 (not compressed), length (uint32 BE), the message. */
function grpcFrame(message: Uint8Array): Uint8Array {
  const frame = new Uint8Array(5 + message.length);
  new DataView(frame.buffer).setUint32(1, message.length);
  frame.set(message, 5);
  return frame;
}

const MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

export async function runH2load(run: H2loadRun): Promise<H2loadResult> {
  const body = `${run.dir}/h2load-body.bin`;
  const streams = Math.ceil(run.concurrency / run.connections);
  await Bun.write(body, grpcFrame(run.message));
  const headers = Object.entries({ "content-type": "application/grpc", te: "trailers", ...run.headers }).flatMap(
    ([name, value]) => ["-H", `${name}: ${value}`],
  );
  const child = Bun.spawn(
    [
      run.h2load,
      "-D",
      String(run.seconds),
      "-c",
      String(run.connections),
      "-m",
      String(streams),
      "-d",
      body,
      ...headers,
      run.url,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`h2load exited ${code}: ${err}${out}`);
  const finished = /finished in ([\d.]+)s, ([\d.]+) req\/s/.exec(out);
  const requests = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
  const status = /status codes: (\d+) 2xx/.exec(out);
  const time = /time for request:\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)/.exec(out);
  if (!finished || !requests || !time) throw new Error(`h2load: unexpected output:\n${out}`);
  const ms = (value: string | undefined, unit: string | undefined) => Number(value) * (MS[unit ?? "ms"] ?? 1);
  const usage = child.resourceUsage();
  const succeeded = Number(status?.[1] ?? requests[1]);
  return {
    calls: succeeded,
    errors: Number(requests[2]) + Number(requests[3]),
    perSecond: Math.round(Number(finished[2])),
    meanMs: ms(time[5], time[6]),
    maxMs: ms(time[3], time[4]),
    cpuSeconds: usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6 : Number.NaN,
    elapsedSeconds: Number(finished[1]),
    inFlight: streams * run.connections,
  };
}
