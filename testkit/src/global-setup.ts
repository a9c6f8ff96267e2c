/**
 * Global setup of `bun test` (bunfig.toml preload), run once per test run:
 * - SVC_STACK_* already set (e.g. `set -a; . <state>/stack.env`): the tests use that stack and stop nothing;
 * - SVC_TEST_NO_STACK=1: no server at all (`serversAllowed`); tests that need the stack fail with
 *   STACK_ENV_INCOMPLETE;
 * - otherwise: a private stack on free loopback ports in a temporary state directory, started here and stopped
 *   (data purged) after the last test; killed at once if the run exits early, and killed and purged on SIGTERM,
 *   SIGINT or SIGHUP (`preparePrivateStack`).
 */
import { afterAll } from "bun:test";
import { createProgress, up } from "@svc/stack";
import { serversAllowed } from "./describe-with-servers.ts";
import { preparePrivateStack } from "./private-stack.ts";
import { missingStackKeys } from "./stack-env.ts";

/** Stopping six servers one after another, each allowed its grace period: far beyond the per-test timeout. */
const STOP_TIMEOUT_MS = 180_000;

async function startPrivateStack(): Promise<void> {
  const stack = await preparePrivateStack({ progress: createProgress() });
  const started = performance.now();
  try {
    Object.assign(process.env, (await up(stack.ctx)).env);
  } catch (error) {
    await stack.remove();
    throw error;
  }
  const seconds = Math.round(performance.now() - started) / 1000;
  process.stderr.write(`test stack up in ${seconds}s (${stack.ctx.stateDir})\n`);
  afterAll(() => stack.remove(), STOP_TIMEOUT_MS);
}

if (serversAllowed() && missingStackKeys(process.env).length > 0) {
  await startPrivateStack();
}
