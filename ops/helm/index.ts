export { ensureHelm } from "./src/helm-tool.ts";
export { CHART_DIR, type HelmRun, KUBE_VERSION, runHelm, setArgs, templateChart } from "./src/run-helm.ts";
