import { expect, test } from "bun:test";
import { exitAfterCleanup, TERMINATING_SIGNALS } from "../index.ts";

test("a signal runs the cleanup once, a second joins it, and the exit is 128 + the signal's number", async () => {
  const exits: number[] = [];
  const cleanups: string[] = [];
  let finish = () => {};
  const handlers = exitAfterCleanup(
    (signal) => {
      cleanups.push(signal);
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    },
    { exit: (code) => exits.push(code) },
  );
  try {
    const first = handlers.handle("SIGINT");
    const second = handlers.handle("SIGTERM");
    expect(exits).toEqual([]); // not before the cleanup ended
    finish();
    await Promise.all([first, second]);
    expect(cleanups).toEqual(["SIGINT"]);
    expect(exits).toEqual([130]);
  } finally {
    handlers.remove();
  }
});

test("a cleanup that fails still exits; remove() takes the handlers away", async () => {
  const before = TERMINATING_SIGNALS.map((signal) => process.listenerCount(signal));
  const exits: number[] = [];
  const handlers = exitAfterCleanup(() => Promise.reject(new Error("disk gone")), { exit: (code) => exits.push(code) });
  expect(TERMINATING_SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before.map((n) => n + 1));
  await handlers.handle("SIGTERM");
  expect(exits).toEqual([143]);
  handlers.remove();
  expect(TERMINATING_SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before);
});
