import { describe } from "bun:test";

/**
 * `SVC_TEST_NO_STACK=1` promises a run that starts no server at all: the global setup starts no shared stack, and
 * tests that start servers of their own (a private etcd, a stack runner test) are not registered. Tests that need
 * the shared stack fail with STACK_ENV_INCOMPLETE instead, so a run that forgot the stack says so.
 */
export function serversAllowed(env: Record<string, string | undefined> = process.env): boolean {
  return env.SVC_TEST_NO_STACK !== "1";
}

/**
 * `describe` for tests that start servers of their own. Under `SVC_TEST_NO_STACK=1` it registers none of them
 * (they are not skipped: CI fails a run with skipped tests) and says so on stderr.
 */
export function describeWithServers(label: string, body: () => void): void {
  if (serversAllowed()) {
    describe(label, body);
    return;
  }
  process.stderr.write(`SVC_TEST_NO_STACK=1: not registered (starts servers): ${label}\n`);
}
