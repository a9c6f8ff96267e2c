import { join } from "node:path";
import { type CommandRun, runCommand } from "@svc/common";
import { VERSIONS } from "@svc/stack";
import { ensureHelm } from "./helm-tool.ts";

/** The chart of this repository. */
export const CHART_DIR = join(import.meta.dir, "..", "svc");

export type HelmRun = CommandRun;

/** Runs the pinned helm (built on first use) with `args`; never throws on a non-zero exit. */
export async function runHelm(args: string[], env: Record<string, string | undefined> = process.env): Promise<HelmRun> {
  const helm = await ensureHelm({ env });
  // helm keeps its own state under HELM_* directories; a render needs none of it, so it goes to a scratch place.
  const home = join(env.TMPDIR ?? "/tmp", "svc-helm-home");
  return runCommand([helm, ...args], {
    env: {
      ...env,
      HELM_CACHE_HOME: join(home, "cache"),
      HELM_CONFIG_HOME: join(home, "config"),
      HELM_DATA_HOME: join(home, "data"),
    },
  });
}

/**
 * The Kubernetes version renders are made for: the stack's kube-apiserver's. A helm built from its Go module (not
 * a release binary) has no version stamped in and would assume v1.20, below the chart's kubeVersion (native
 * sidecars need 1.29).
 */
export const KUBE_VERSION = VERSIONS.kubernetes;

/** `--set` arguments of `values`. */
export const setArgs = (values: Record<string, string> = {}) =>
  Object.entries(values).flatMap(([key, value]) => ["--set", `${key}=${value}`]);

/** `helm template` of the chart with `--set` values; returns the rendered YAML, or throws with helm's stderr. */
export async function templateChart(options: {
  release?: string;
  namespace?: string;
  set?: Record<string, string>;
}): Promise<string> {
  const run = await runHelm([
    "template",
    options.release ?? "svc",
    CHART_DIR,
    "--kube-version",
    KUBE_VERSION,
    "--namespace",
    options.namespace ?? "default",
    ...setArgs(options.set),
  ]);
  if (run.code !== 0) throw new Error(`helm template exited ${run.code}: ${run.stderr.trim()}`);
  return run.stdout;
}
