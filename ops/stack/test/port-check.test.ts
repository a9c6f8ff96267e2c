import { expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { StackError } from "../src/errors.ts";
import { freePort } from "../src/free-port.ts";
import { assertPortsFree, isPortFree } from "../src/port-check.ts";
import { holdPort, LISTENER_SCRIPT } from "./support/hold-port.ts";

test("a port with no listener is free; a loopback listener's port is not", async () => {
  const held = await holdPort("127.0.0.1");
  try {
    expect(await isPortFree(held.port)).toBe(false);
  } finally {
    await held.release();
  }
  expect(await isPortFree(held.port)).toBe(true);
});

test("a listener on every address (IPv6 ::, dual stack) takes the loopback port too", async () => {
  const held = await holdPort("::");
  try {
    expect(await isPortFree(held.port)).toBe(false);
  } finally {
    await held.release();
  }
});

test("a taken port fails with STACK_PORT_IN_USE naming the port, the holder's pid and its command line", async () => {
  const free = await freePort();
  const held = await holdPort("127.0.0.1");
  try {
    const error = await rejectionOf(assertPortsFree("etcd", [free, held.port]), StackError);
    expect(error.code).toBe("STACK_PORT_IN_USE");
    expect(error.subject).toBe("etcd");
    expect(error.message).toContain(`port ${held.port} is in use by pid ${held.pid} (`);
    expect(error.message).toContain(LISTENER_SCRIPT);
    expect(error.message).not.toContain(`port ${free} `);
  } finally {
    await held.release();
  }
});

test("free ports pass", async () => {
  expect(await assertPortsFree("etcd", [await freePort(), await freePort()])).toBeUndefined();
});
