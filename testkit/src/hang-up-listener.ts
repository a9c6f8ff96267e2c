/**
 * A loopback listener that accepts and hangs up at once: an address where nothing answers HTTP, without dialling
 * a closed port that another process could take meanwhile.
 */
export function hangUpListener(): { url: string; stop(): void } {
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.end();
      },
      data() {},
    },
  });
  return { url: `http://127.0.0.1:${listener.port}`, stop: () => listener.stop(true) };
}
