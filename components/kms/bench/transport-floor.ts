// `bun components/kms/bench/transport-floor.ts [--seconds 6] [--concurrency 64] [--channels 2] [--plaintext]`: the floor under
// bench:kms — the same traffic (4 KiB request, 4 KiB + 33 bytes answer, unary, TLS with a certificate of the KMS's own
// CA) through grpc-js on Bun's node:http2, to a server that does nothing (no auth, no protobuf, no crypto), from raw
// grpc-js clients (no SDK). What this reaches on the machine is what grpc-js over Bun's HTTP/2 + TLS allows, whatever
// the KMS does per call. The server runs in its own process (`--serve`), so each side's CPU is measured apart.
import {
  ChannelCredentials,
  Client,
  type handleUnaryCall,
  Server,
  ServerCredentials,
  type ServiceDefinition,
} from "@grpc/grpc-js";
import { bindGrpcServer } from "@svc/common";
import { createRootCa, issueServerCertificate } from "../index.ts";

const flag = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const identity = (value: Buffer) => value;
const PATH = "/bench.Floor/Echo";
const definition: ServiceDefinition = {
  echo: {
    path: PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

if (process.argv.includes("--serve")) {
  const keyPem = process.env.FLOOR_KEY_PEM ?? "";
  const certPem = process.env.FLOOR_CERT_PEM ?? "";
  const server = new Server();
  const answer = Buffer.alloc(4096 + 33, 1);
  const echo: handleUnaryCall<Buffer, Buffer> = (_call, callback) => callback(null, answer);
  server.addService(definition, { echo });
  const credentials =
    keyPem === ""
      ? ServerCredentials.createInsecure()
      : ServerCredentials.createSsl(
          null,
          [{ private_key: Buffer.from(keyPem), cert_chain: Buffer.from(certPem) }],
          false,
        );
  console.log(await bindGrpcServer(server, "127.0.0.1:0", credentials));
} else {
  const seconds = flag("seconds", 6);
  const concurrency = flag("concurrency", 64);
  const channels = flag("channels", 2);
  // --plaintext: the same without TLS, to see what TLS costs
  const plaintext = process.argv.includes("--plaintext");
  const ca = await createRootCa();
  const certificate = await issueServerCertificate(ca, [{ type: "dns", value: "localhost" }], 1);
  const child = Bun.spawn([process.execPath, import.meta.path, "--serve"], {
    env: plaintext
      ? process.env
      : { ...process.env, FLOOR_KEY_PEM: certificate.keyPem, FLOOR_CERT_PEM: certificate.certPem },
    stdout: "pipe",
  });
  const reader = child.stdout.getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  const cpuOf = async (pid: number) => {
    const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  const clients = Array.from(
    { length: channels },
    (_, index) =>
      new Client(
        `127.0.0.1:${port}`,
        plaintext ? ChannelCredentials.createInsecure() : ChannelCredentials.createSsl(Buffer.from(ca.certPem)),
        {
          "grpc.channel_id": index, // distinct options: one connection per client
          // Bun's TLS refuses an IP address as server name: dial 127.0.0.1, check the certificate's `localhost`
          "grpc.ssl_target_name_override": "localhost",
        },
      ),
  );
  const request = Buffer.alloc(4096, 7);
  const call = (client: Client) =>
    new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(PATH, identity, identity, request, { deadline: Date.now() + 10_000 }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  for (const client of clients) await call(client);
  const serverBefore = await cpuOf(child.pid);
  const clientBefore = process.cpuUsage();
  let calls = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, index) => {
      const client = clients[index % clients.length] as Client;
      while (performance.now() < until) {
        await call(client);
        calls += 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const serverCpu = (await cpuOf(child.pid)) - serverBefore;
  const used = process.cpuUsage(clientBefore);
  const clientCpu = (used.user + used.system) / 1e6;
  console.table([
    {
      transport: plaintext ? "plaintext" : "TLS",
      "calls/s": Math.round(calls / elapsed),
      "server cores": (serverCpu / elapsed).toFixed(2),
      "client cores": (clientCpu / elapsed).toFixed(2),
      "server µs CPU/call": Math.round((serverCpu * 1e6) / calls),
      "client µs CPU/call": Math.round((clientCpu * 1e6) / calls),
      load: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
    },
  ]);
  for (const client of clients) client.close();
  child.kill();
  await child.exited;
}
