import { expect, test } from "bun:test";
import { credentials, makeGenericClientConstructor, Server, type ServiceDefinition } from "@grpc/grpc-js";
import { bindGrpcServer, stopGrpcServer } from "../index.ts";

const bytes = { serialize: (value: Buffer) => value, deserialize: (value: Buffer) => value };
const definition: ServiceDefinition = {
  Hang: {
    path: "/test.Hang/Hang",
    requestStream: false,
    responseStream: true,
    requestSerialize: bytes.serialize,
    requestDeserialize: bytes.deserialize,
    responseSerialize: bytes.serialize,
    responseDeserialize: bytes.deserialize,
  },
};

test("binds on port 0 and answers its port; a taken address is refused", async () => {
  const first = new Server();
  const port = await bindGrpcServer(first, "127.0.0.1:0");
  expect(port).toBeGreaterThan(0);
  const second = new Server();
  const refused = await bindGrpcServer(second, `127.0.0.1:${port}`).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refused).toBeInstanceOf(Error);
  first.forceShutdown();
  second.forceShutdown();
});

test("a stream that never ends is cut after the grace period, not waited for", async () => {
  const server = new Server();
  let opened!: () => void;
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  server.addService(definition, { Hang: () => opened() });
  const port = await bindGrpcServer(server, "127.0.0.1:0");
  const Client = makeGenericClientConstructor(definition, "Hang");
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  const call = (client as unknown as { Hang(request: Buffer): NodeJS.EventEmitter }).Hang(Buffer.alloc(0));
  const ended = new Promise<void>((resolve) => {
    call.on("error", () => resolve());
    call.on("end", () => resolve());
  });
  await open;
  const started = performance.now();
  await stopGrpcServer(server, 200);
  expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  await ended;
  client.close();
});

test("importing @svc/common does not load grpc-js (most services never use it; about 80 ms at start-up)", async () => {
  const index = new URL("../index.ts", import.meta.url).pathname;
  const script = `await import(${JSON.stringify(index)});
console.log(Object.keys(require.cache).filter((path) => path.includes("@grpc/grpc-js")).length);`;
  const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
  const loaded = (await new Response(child.stdout).text()).trim();
  expect(await child.exited).toBe(0);
  expect(loaded).toBe("0");
});
