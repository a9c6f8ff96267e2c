import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../src/free-port.ts";
import { describeHolders, listeningInodes, portListeners } from "../src/port-holder.ts";
import { holdPort, LISTENER_SCRIPT } from "./support/hold-port.ts";

test("the holder of an IPv4 listener is found through /proc: its pid, group and command line", async () => {
  const held = await holdPort("127.0.0.1");
  try {
    const listeners = portListeners(held.port);
    expect(listeners?.sockets).toBe(1);
    expect(listeners?.holders).toEqual([{ pid: held.pid, pgid: expect.any(Number), command: expect.any(String) }]);
    expect(listeners?.holders[0]?.command).toContain(LISTENER_SCRIPT);
    const text = describeHolders(listeners);
    expect(text).toContain(`pid ${held.pid} (`);
    expect(text).toContain(LISTENER_SCRIPT);
  } finally {
    await held.release();
  }
});

test("an IPv6 any-address listener is found in /proc/net/tcp6", async () => {
  const held = await holdPort("::");
  try {
    expect(portListeners(held.port)?.holders.map((h) => h.pid)).toEqual([held.pid]);
  } finally {
    await held.release();
  }
});

test("a port nobody listens on has no listener, and the description says the holder is unknown", async () => {
  const port = await freePort();
  const listeners = portListeners(port);
  expect(listeners).toEqual({ sockets: 0, holders: [] });
  expect(describeHolders(listeners)).toContain("cannot be determined");
});

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "fake-proc-"));
  roots.push(root);
  return root;
}

/** A fake /proc: net tables only, so no process can be seen holding the socket. */
function fakeProc(rows: string[]): string {
  const root = tempRoot();
  mkdirSync(join(root, "net"));
  const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
  writeFileSync(join(root, "net", "tcp"), [header, ...rows, ""].join("\n"));
  return root;
}

test("only LISTEN rows of the port count; another state or port does not", () => {
  const root = fakeProc([
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0",
    "   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 100 0 0 10 0",
    "   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1 0 100 0 0 10 0",
  ]);
  expect([...(listeningInodes(0x1f90, root) ?? [])]).toEqual(["111"]);
});

test("a listening socket that no readable process holds is reported as undeterminable", () => {
  const root = fakeProc([
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0",
  ]);
  const listeners = portListeners(0x1f90, root);
  expect(listeners).toEqual({ sockets: 1, holders: [] });
  expect(describeHolders(listeners)).toContain("no readable /proc/<pid>/fd");
});

test("without /proc/net the listeners are unknown, and the description says so", () => {
  const root = tempRoot();
  expect(portListeners(8080, root)).toBeUndefined();
  expect(describeHolders(undefined)).toContain("cannot be determined");
});
