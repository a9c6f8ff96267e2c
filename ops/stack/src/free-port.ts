import { readFileSync } from "node:fs";

/** Where the kernel's ephemeral ports start when `/proc/sys/net/ipv4/ip_local_port_range` cannot be read (Linux's default). */
const DEFAULT_EPHEMERAL_START = 32_768;
/** Ports below this are left alone (well-known and registered services a developer may run). */
const LOWEST = 10_000;

/** The first port of an `ip_local_port_range` text (`"32768\t60999"`); the default when it is not one. */
export function ephemeralStartOf(text: string): number {
  const first = Number(text.trim().split(/\s+/)[0]);
  return Number.isInteger(first) && first > 0 && first <= 65_535 ? first : DEFAULT_EPHEMERAL_START;
}

let ephemeralStartKept: number | undefined;

/** The kernel's ephemeral range start, read once per process. */
function ephemeralStart(): number {
  if (ephemeralStartKept === undefined) {
    try {
      ephemeralStartKept = ephemeralStartOf(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "latin1"));
    } catch {
      ephemeralStartKept = DEFAULT_EPHEMERAL_START;
    }
  }
  return ephemeralStartKept;
}

/** Whether a listener can bind `port` on loopback now (the probe is closed again at once). */
function canBind(port: number): boolean {
  try {
    Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } }).stop(true);
    return true;
  } catch {
    return false;
  }
}

const handedOut = new Set<number>();

/**
 * A free loopback port for a server that binds it later, below the kernel's ephemeral range: a port the kernel
 * picked (bind to 0) lies inside that range, and any outgoing connection may take it as its local port before the
 * server binds it — a private stack's Keycloak, bound ~10 s after its port was chosen, failed so ("Port already
 * bound", 2026-11-26). Each port is handed out once per process: a port found free stays unbound until its server
 * starts, so two calls could otherwise draw the same one. Falls back to a kernel-picked port when the range leaves
 * no room below it.
 */
export function freePortSync(): number {
  const top = ephemeralStart();
  for (let attempt = 0; top - LOWEST > 1_000 && attempt < 1_000; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * (top - LOWEST));
    if (handedOut.has(port) || !canBind(port)) continue;
    handedOut.add(port);
    return port;
  }
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  handedOut.add(port);
  return port;
}

/**
 * `length` consecutive free loopback ports below the kernel's ephemeral range (for servers that take a base port and
 * the ports after it), each handed out as `freePortSync`'s are, so no later call draws one of them: a span found free
 * by probing alone stayed unknown to `freePortSync`, which could hand one of its ports to another server (the
 * services test's audit API, 2026-11-28: `EADDRINUSE`). Returns the first port.
 */
export function freePortSpan(length: number): number {
  const top = ephemeralStart();
  for (let attempt = 0; top - LOWEST > length && attempt < 1_000; attempt += 1) {
    const base = LOWEST + Math.floor(Math.random() * (top - LOWEST - length));
    let port = base;
    while (port < base + length && !handedOut.has(port) && canBind(port)) port += 1;
    if (port < base + length) continue;
    for (port = base; port < base + length; port += 1) handedOut.add(port);
    return base;
  }
  throw new Error(`no ${length} consecutive free ports between ${LOWEST} and ${top}`);
}

/** `freePortSync` for the callers that await it. */
export function freePort(): Promise<number> {
  return Promise.resolve(freePortSync());
}
