import { join } from "node:path";
import { withInstallLock } from "../../stack/src/install-lock.ts";
import { ensureGoBinary, type GoTool, goBinaryPath } from "../../stack/src/installers.ts";
import { cacheDir } from "../../stack/src/paths.ts";
import { type Progress, silentProgress } from "../../stack/src/progress.ts";

type Env = Record<string, string | undefined>;

/** Helm v3, pinned by the wrapper module ops/tools/helm (go.mod + go.sum: the version and every dependency). */
export const HELM_TOOL: GoTool = {
  name: "helm",
  moduleDir: join(import.meta.dir, "..", "..", "tools", "helm"),
  pkg: "helm.sh/helm/v3/cmd/helm",
};

/** Where the built helm is (or will be): `<cache>/bin/helm-<hash of go.mod and go.sum>`. */
export const helmPath = (env: Env = process.env): string => goBinaryPath(cacheDir(env), HELM_TOOL);

/**
 * The path of the pinned helm, built on first use into the shared cache (~/.cache/svc-ops, or SVC_OPS_CACHE_DIR)
 * the way the stack's other Go tools are, under the same per-name install lock so that two test files (or a test
 * and CI) never build it at once. Its Go build cache is `<cache>/go-build` (GOCACHE), so a rebuild after a pin
 * change reuses the unchanged packages. A second call returns at once.
 */
export async function ensureHelm(options: { env?: Env; progress?: Progress } = {}): Promise<string> {
  const env = options.env ?? process.env;
  const cache = cacheDir(env);
  const task = (options.progress ?? silentProgress).task("install helm", 1);
  const goEnv = { ...env, GOCACHE: join(cache, "go-build") };
  return withInstallLock(cache, HELM_TOOL.name, () => ensureGoBinary({ cacheDir: cache, env: goEnv }, task, HELM_TOOL));
}
