/**
 * A real TCP server for the stack runner's tests, run as its own process:
 *   bun listener.ts <host> <port, 0 for any> [file to write this process's environment to]
 * Prints the port it listens on, then serves (closing each connection at once) until it is killed.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";

const [host = "127.0.0.1", port = "0", envFile] = process.argv.slice(2);
if (envFile) writeFileSync(envFile, JSON.stringify(process.env));
const server = createServer((socket) => socket.end());
server.listen({ host, port: Number(port), exclusive: true }, () => {
  const address = server.address();
  if (typeof address === "object" && address !== null) console.log(address.port);
});
