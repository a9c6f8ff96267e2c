import { expect, test } from "bun:test";
import { Wakeup } from "../src/wakeup.ts";

test("a wake while nobody waits is lost to wait() but not to waitSince() read before it", async () => {
  const wakeup = new Wakeup();
  const before = wakeup.wakes;
  wakeup.wake(); // the file's watch fires while the loop is still checking the file's end
  expect(Bun.peek.status(wakeup.waitSince(before, 60_000))).toBe("fulfilled");
  const plain = wakeup.wait(60_000);
  expect(Bun.peek.status(plain)).toBe("pending");
  wakeup.wake();
  await plain;
});

test("waitSince with no wake since waits for the next wake (or its timeout)", async () => {
  const wakeup = new Wakeup();
  const waited = wakeup.waitSince(wakeup.wakes, 60_000);
  expect(Bun.peek.status(waited)).toBe("pending");
  wakeup.wake();
  await waited;
  const timedOut = wakeup.waitSince(wakeup.wakes, 1);
  await timedOut;
  expect(Bun.peek.status(timedOut)).toBe("fulfilled");
});
