import { createServer } from "node:net";
import { StackError } from "./errors.ts";
import { describeHolders, portListeners } from "./port-holder.ts";

/** Every server of the stack listens on loopback; a listener on 127.0.0.1 or on any address takes the port. */
const HOST = "127.0.0.1";

/**
 * Whether a server could listen on `port` now: binds it exclusively and lets go at once. Only EADDRINUSE counts
 * as taken; any other bind error (a privileged port, say) is the server's own to report.
 */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code !== "EADDRINUSE"));
    server.listen({ port, host: HOST, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Fails with STACK_PORT_IN_USE, naming each taken port and the process that holds it, unless all are free. */
export async function assertPortsFree(service: string, ports: readonly number[]): Promise<void> {
  const taken: string[] = [];
  for (const port of ports) {
    if (!(await isPortFree(port))) taken.push(`port ${port} is in use by ${describeHolders(portListeners(port))}`);
  }
  if (taken.length > 0) {
    throw new StackError("STACK_PORT_IN_USE", `${service} cannot start: ${taken.join("; ")}`, service);
  }
}
