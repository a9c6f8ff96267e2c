import { loadStackConfig } from "./config.ts";
import type { StackContext } from "./context.ts";
import { cacheDir, defaultStateDir } from "./paths.ts";
import { createProgress, type Progress } from "./progress.ts";

export function createContext(
  env: Record<string, string | undefined>,
  overrides: { stateDir?: string; progress?: Progress } = {},
): StackContext {
  return {
    config: loadStackConfig(env),
    env,
    cacheDir: cacheDir(env),
    stateDir: overrides.stateDir ?? defaultStateDir(env),
    progress: overrides.progress ?? createProgress(),
  };
}
