import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StackContext, StackService } from "../../src/context.ts";
import { createContext } from "../../src/context-factory.ts";
import { silentProgress } from "../../src/progress.ts";

/** A service of the tests' own: no install, a TCP probe by default, nothing exported. */
export function fakeService(
  name: string,
  ports: readonly number[],
  overrides: Partial<StackService> = {},
): StackService {
  return {
    name,
    after: [],
    readiness: { timeoutMs: 10_000, intervalMs: 20 },
    ports: () => ports,
    install: async () => {},
    start: async () => {
      throw new Error(`${name}: the test gave no start`);
    },
    probe: async () => false,
    address: () => name,
    exports: () => ({}),
    ...overrides,
  };
}

/** A context on a fresh temporary state directory, silent, with `env` added to this process's environment. */
export function testContext(env: Record<string, string> = {}): StackContext {
  const stateDir = mkdtempSync(join(tmpdir(), "stack-test-"));
  for (const sub of ["logs", "pids"]) mkdirSync(join(stateDir, sub));
  return createContext({ ...process.env, ...env }, { stateDir, progress: silentProgress });
}
