import { expect, test } from "bun:test";

/**
 * The run's default per-test timeout must exceed Bun's own 5 s: tests against real servers (and the global
 * setup's afterAll that stops them) take longer. This test has no timeout of its own and waits a bit over 6 s,
 * so it passes only when the default (`bun test --timeout 60000` in package.json's scripts) is in force.
 */
const JUST_OVER_SIX_SECONDS_MS = 6_200;

test("the default test timeout is longer than Bun's 5 s", async () => {
  const started = performance.now();
  await Bun.sleep(JUST_OVER_SIX_SECONDS_MS);
  expect(performance.now() - started).toBeGreaterThanOrEqual(JUST_OVER_SIX_SECONDS_MS - 50);
});
