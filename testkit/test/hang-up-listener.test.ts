import { expect, test } from "bun:test";
import { hangUpListener } from "../index.ts";

test("a hang-up listener gives no HTTP answer", async () => {
  const listener = hangUpListener();
  try {
    await expect(fetch(`${listener.url}/token`, { method: "POST", body: "x" })).rejects.toThrow();
  } finally {
    listener.stop();
  }
});

test("its port stays taken while it runs: nobody else can bind it", () => {
  const listener = hangUpListener();
  try {
    const port = Number(new URL(listener.url).port);
    expect(port).toBeGreaterThan(0);
    expect(() => Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } }).stop(true)).toThrow();
  } finally {
    listener.stop();
  }
});
