import { expect, test } from "bun:test";
import { isAlive } from "../index.ts";

test("a running process is alive; one that exited is not", async () => {
  expect(isAlive(process.pid)).toBe(true);
  const child = Bun.spawn(["true"]);
  await child.exited;
  expect(isAlive(child.pid)).toBe(false);
});
