import { expect, test } from "bun:test";
import { ephemeralStartOf, freePort, freePortSync } from "../src/free-port.ts";

const ephemeralStart = ephemeralStartOf(await Bun.file("/proc/sys/net/ipv4/ip_local_port_range").text());

test("free ports lie below the kernel's ephemeral range, are bindable, and are never handed out twice", async () => {
  const ports = [...Array.from({ length: 40 }, () => freePortSync()), await freePort()];
  expect(new Set(ports).size).toBe(ports.length);
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(10_000);
    expect(port).toBeLessThan(ephemeralStart);
  }
  const server = Bun.listen({ hostname: "127.0.0.1", port: ports[0] as number, socket: { data() {} } });
  expect(server.port).toBe(ports[0] as number);
  server.stop(true);
});

test("a port something listens on is not handed out", () => {
  const held = Bun.listen({ hostname: "127.0.0.1", port: freePortSync(), socket: { data() {} } });
  try {
    for (let i = 0; i < 200; i += 1) expect(freePortSync()).not.toBe(held.port);
  } finally {
    held.stop(true);
  }
});

test("ephemeralStartOf reads the range's first port, and falls back to Linux's default on anything else", () => {
  expect(ephemeralStartOf("32768\t60999\n")).toBe(32_768);
  expect(ephemeralStartOf("49152 65535")).toBe(49_152);
  expect(ephemeralStartOf("")).toBe(32_768);
  expect(ephemeralStartOf("lots")).toBe(32_768);
  expect(ephemeralStartOf("70000 80000")).toBe(32_768);
});
