export { type ApiConstructor, loadKubeConfig, makeKubeClient } from "./src/kube-client.ts";
