import { createConnection, createServer, type Socket } from "node:net";

export interface HoldProxy {
  port: number;
  /** Connections accepted so far (held until `release()`, then forwarded). */
  accepted: number;
  /** Forwards the held connections (and every later one) to the target. */
  release(): void;
  stop(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1:0 to `127.0.0.1:targetPort` that holds connections until released. */
export async function startHoldProxy(targetPort: number): Promise<HoldProxy> {
  const held: Socket[] = [];
  const open = new Set<Socket>();
  let released = false;
  const forward = (client: Socket) => {
    const upstream = createConnection(targetPort, "127.0.0.1");
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("error", drop);
      socket.on("close", drop);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = createServer((client) => {
    open.add(client);
    state.accepted += 1;
    if (released) forward(client);
    else held.push(client);
  });
  const state: HoldProxy = {
    port: 0,
    accepted: 0,
    release() {
      released = true;
      for (const client of held.splice(0)) forward(client);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  state.port = typeof address === "object" && address !== null ? address.port : 0;
  return state;
}
