export { type ApiConstructor, loadKubeConfig, makeKubeClient } from "./src/kube-client.ts";
export {
  type KubeWatch,
  KubeWatchError,
  type KubeWatchEvent,
  type KubeWatchOptions,
  makeKubeWatch,
} from "./src/kube-watch.ts";
