// Types only at the top: @svc/common is imported by every service, most of which never load grpc-js (about 80 ms).
import type { Server, ServerCredentials } from "@grpc/grpc-js";

/** Binds a grpc-js server (plaintext unless `credentials` say otherwise); resolves with the port it got. */
export async function bindGrpcServer(
  server: Server,
  address: string,
  credentials?: ServerCredentials,
): Promise<number> {
  const bindWith = credentials ?? (await import("@grpc/grpc-js")).ServerCredentials.createInsecure();
  return new Promise((resolve, reject) => {
    server.bindAsync(address, bindWith, (error, port) => (error ? reject(error) : resolve(port)));
  });
}

/**
 * Stops a grpc-js server: calls in flight may finish for up to `graceMs`, then whatever is still open (a health
 * watch, a long stream never ends by itself) is cut.
 */
export async function stopGrpcServer(server: Server, graceMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const graceful = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  await Promise.race([graceful, grace]);
  clearTimeout(timer);
  server.forceShutdown();
}
