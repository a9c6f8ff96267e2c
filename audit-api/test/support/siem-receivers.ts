import { createServer, type Server, type Socket } from "node:net";

/**
 * A Splunk-HEC-like receiver for tests: a batch counts as received when it answers 2xx. `mode` "down" is not
 * a mode: `stop()` closes the socket. "unavailable" answers 503; "hold" keeps the request unanswered (and then
 * drops it) so a test can kill the sender while its batch is in flight. `holdFrom(n)` turns "hold" on by itself
 * once n ids were received: a test that polled the count and then set the mode could find the sender done.
 */
export class HecReceiver {
  readonly ids: string[] = [];
  readonly lines: Record<string, unknown>[] = [];
  mode: "up" | "unavailable" | "hold" = "up";
  private holdAt = Number.POSITIVE_INFINITY;
  unavailableAnswers = 0;
  /** Resolved when a request is being held. */
  held: Promise<void>;
  private markHeld: () => void = () => {};
  private releaseHeld: () => void = () => {};
  private server: ReturnType<typeof Bun.serve> | undefined;
  port = 0;

  constructor(private readonly token: string) {
    this.held = this.newHold();
  }

  private newHold(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.markHeld = resolve;
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/services/collector/event`;
  }

  start(): void {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: this.port,
      fetch: async (request) => {
        if (request.headers.get("authorization") !== `Splunk ${this.token}`) {
          return Response.json({ text: "Invalid token", code: 4 }, { status: 403 });
        }
        const body = await request.text();
        if (this.ids.length >= this.holdAt) {
          this.mode = "hold";
          this.holdAt = Number.POSITIVE_INFINITY;
        }
        if (this.mode === "unavailable") {
          this.unavailableAnswers++;
          return Response.json({ text: "Server is busy", code: 9 }, { status: 503 });
        }
        if (this.mode === "hold") {
          const release = new Promise<void>((resolve) => {
            this.releaseHeld = resolve;
          });
          this.markHeld();
          await release;
          return new Response("dropped", { status: 503 });
        }
        for (const line of body.split("\n").filter((l) => l !== "")) {
          const event = JSON.parse(line) as { event: { id: string } };
          this.lines.push(event);
          this.ids.push(event.event.id);
        }
        return Response.json({ text: "Success", code: 0 });
      },
    });
    this.port = this.server.port ?? 0;
  }

  /** The first request after `count` ids were received is held (and `mode` is "hold" from then on). */
  holdFrom(count: number): void {
    this.holdAt = count;
  }

  release(): void {
    this.releaseHeld();
    this.held = this.newHold();
  }

  async stop(): Promise<void> {
    await this.server?.stop(true);
  }
}

/**
 * An RFC 6587 octet-counting syslog receiver for tests: a connection's messages count as received when the sender
 * half-closes and the receiver closes in turn. "hold" pauses a new connection without reading it; `holdFrom(n)`
 * turns it on by itself for the first connection after n ids were received (as HecReceiver's does).
 */
export class SyslogReceiver {
  readonly ids: string[] = [];
  readonly messages: string[] = [];
  mode: "up" | "hold" = "up";
  private holdAt = Number.POSITIVE_INFINITY;
  held: Promise<Socket>;
  private markHeld: (socket: Socket) => void = () => {};
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor() {
    this.held = this.newHold();
  }

  private newHold(): Promise<Socket> {
    return new Promise<Socket>((resolve) => {
      this.markHeld = resolve;
    });
  }

  async start(): Promise<void> {
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => {});
      if (this.ids.length >= this.holdAt) {
        this.mode = "hold";
        this.holdAt = Number.POSITIVE_INFINITY;
      }
      if (this.mode === "hold") {
        socket.pause();
        this.markHeld(socket);
        this.held = this.newHold();
        return;
      }
      const chunks: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("end", () => {
        for (const message of parseFrames(Buffer.concat(chunks))) {
          this.messages.push(message);
          const id = /\[audit@32473 id="([^"]*)"/.exec(message)?.[1];
          if (id !== undefined) this.ids.push(id);
        }
        socket.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
  }

  /** The first connection after `count` ids were received is held (and `mode` is "hold" from then on). */
  holdFrom(count: number): void {
    this.holdAt = count;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Splits RFC 6587 octet-counted frames (`<n> <n bytes>`); throws on a partial frame. */
export function parseFrames(data: Buffer): string[] {
  const messages: string[] = [];
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = Number(data.subarray(offset, space).toString("ascii"));
    if (space === -1 || !Number.isInteger(length) || space + 1 + length > data.length) {
      throw new Error(`partial or malformed frame at byte ${offset}`);
    }
    messages.push(data.subarray(space + 1, space + 1 + length).toString("utf8"));
    offset = space + 1 + length;
  }
  return messages;
}
