import { expect, test } from "bun:test";
import { ephemeralStartOf, freePort, freePortSpan, freePortSync } from "../src/free-port.ts";

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

test("a span of free ports is bindable, below the ephemeral range, and none of its ports is handed out again", () => {
  const length = 100;
  const base = freePortSpan(length);
  expect(base).toBeGreaterThanOrEqual(10_000);
  expect(base + length).toBeLessThanOrEqual(ephemeralStart);
  for (const port of [base, base + length - 1]) {
    const server = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    expect(server.port).toBe(port);
    server.stop(true);
  }
  // Drawn at random below the range (~22,000 ports), 3,000 ports would land in a span of 100 unless it is known as
  // handed out (all miss it with a chance of about e^-13).
  for (let i = 0; i < 3_000; i += 1) {
    const port = freePortSync();
    expect(port >= base && port < base + length).toBe(false);
  }
  expect(freePortSpan(10)).not.toBe(base);
});

test("ephemeralStartOf reads the range's first port, and falls back to Linux's default on anything else", () => {
  expect(ephemeralStartOf("32768\t60999\n")).toBe(32_768);
  expect(ephemeralStartOf("49152 65535")).toBe(49_152);
  expect(ephemeralStartOf("")).toBe(32_768);
  expect(ephemeralStartOf("lots")).toBe(32_768);
  expect(ephemeralStartOf("70000 80000")).toBe(32_768);
});
