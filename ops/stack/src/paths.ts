import { homedir } from "node:os";
import { join } from "node:path";

/** Where fetched and built artifacts live: outside the checkout, so a fresh clone (CI's) reuses them. */
export function cacheDir(env: Record<string, string | undefined>): string {
  if (env.SVC_OPS_CACHE_DIR) return env.SVC_OPS_CACHE_DIR;
  return join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "svc-ops");
}

/** Where a running stack keeps its data, logs, pid files and the env file that names its addresses. */
export function defaultStateDir(env: Record<string, string | undefined>): string {
  if (env.SVC_STACK_STATE_DIR) return env.SVC_STACK_STATE_DIR;
  return join(env.XDG_STATE_HOME ?? join(homedir(), ".local", "state"), "svc-ops", "stack");
}
