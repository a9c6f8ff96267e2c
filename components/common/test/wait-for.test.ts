import { expect, test } from "bun:test";
import { waitFor } from "../src/wait-for.ts";

test("waitFor resolves with the first defined probe value", async () => {
  let calls = 0;
  const value = await waitFor("third call", async () => (++calls === 3 ? "ready" : undefined), {
    timeoutMs: 5_000,
    intervalMs: 1,
  });
  expect(value).toBe("ready");
  expect(calls).toBe(3);
});

test("waitFor times out carrying the probe's last error", async () => {
  const failure = await waitFor(
    "never",
    async () => {
      throw new Error("connection refused");
    },
    { timeoutMs: 50, intervalMs: 5 },
  ).catch((error: Error) => error);
  expect(failure).toBeInstanceOf(Error);
  expect((failure as Error).message).toContain("connection refused");
});

test("waitFor stops at once when abort reports an error", async () => {
  const dead = new Error("process exited");
  const failure = await waitFor("aborted", async () => undefined, { timeoutMs: 60_000, abort: () => dead }).catch(
    (error: Error) => error,
  );
  expect(failure).toBe(dead);
});
