export { ensureHelm } from "./src/helm-tool.ts";
export { type CommandRun, runCommand } from "./src/run-command.ts";
export { CHART_DIR, type HelmRun, KUBE_VERSION, runHelm, setArgs, templateChart } from "./src/run-helm.ts";
