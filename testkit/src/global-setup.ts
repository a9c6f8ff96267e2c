/**
 * Global setup of `bun test` (bunfig.toml preload), run once per test run:
 * - SVC_STACK_* already set (e.g. `set -a; . <state>/stack.env`): the tests use that stack and stop nothing;
 * - SVC_TEST_NO_STACK=1: no stack (tests that need one fail with STACK_ENV_INCOMPLETE);
 * - otherwise: a private stack on free loopback ports in a temporary state directory, started here and stopped
 *   (data purged) after the last test; killed at once if the run exits early.
 */
import { afterAll } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContext, createProgress, down, freePort, killAllNow, up } from "@svc/stack";
import { missingStackKeys } from "./stack-env.ts";

const PORT_KEYS = [
  "POSTGRES_PORT",
  "KAFKA_PORT",
  "KAFKA_CONTROLLER_PORT",
  "MINIO_PORT",
  "MINIO_CONSOLE_PORT",
  "KEYCLOAK_PORT",
  "KEYCLOAK_MANAGEMENT_PORT",
  "ETCD_PORT",
  "ETCD_PEER_PORT",
  "KUBE_APISERVER_PORT",
];

async function startPrivateStack(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "svc-test-stack-"));
  const env: Record<string, string | undefined> = { ...process.env };
  for (const key of PORT_KEYS) env[`SVC_STACK_${key}`] = String(await freePort());
  const ctx = createContext(env, { stateDir, progress: createProgress() });
  process.on("exit", () => killAllNow(stateDir));
  const started = performance.now();
  const result = await up(ctx);
  process.stderr.write(`test stack up in ${Math.round(performance.now() - started) / 1000}s (${stateDir})\n`);
  Object.assign(process.env, result.env);
  afterAll(async () => {
    await down(ctx, { purge: true });
  });
}

if (process.env.SVC_TEST_NO_STACK !== "1" && missingStackKeys(process.env).length > 0) {
  await startPrivateStack();
}
