import { ApiException, type CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { Elector } from "./elector.ts";
import { withRequestTimeout } from "./request-timeout.ts";

export interface LeaderLabelOptions {
  api: CoreV1Api;
  namespace: string;
  /** This replica's Pod. */
  pod: string;
  /** `svc.ai/<component>-leader`. */
  label: string;
  /** Between two tries while a patch fails; the retry period fits. */
  retryMs: number;
  requestTimeoutMs: number;
  onError?: (error: unknown) => void;
}

/** The label key of a component's leader (spec: Limits, "Leader labels"). */
export const leaderLabelOf = (component: string) => `svc.ai/${component}-leader`;

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/**
 * Keeps the leader label where the leadership is (spec: "leader label is set on the pod"): when this replica
 * becomes leader it merge-patches `<label>=true` onto its own Pod, then removes the label from every other Pod
 * that still carries it (a crashed leader's). Tries again every `retryMs` until done or the leadership ends. On a
 * graceful release it removes its own label (best effort); after a lost renewal it does not try (the apiserver
 * is likely out of reach), and the next leader cleans up.
 */
export function keepLeaderLabel(elector: Elector, options: LeaderLabelOptions): () => void {
  const { api, namespace, pod, label } = options;
  const onError = options.onError ?? (() => {});
  const call = <T>(run: () => Promise<T>) => withRequestTimeout(`pod label ${label}`, options.requestTimeoutMs, run);

  async function labelOnce(): Promise<void> {
    await call(() =>
      api.patchNamespacedPod({ name: pod, namespace, body: { metadata: { labels: { [label]: "true" } } } }, mergePatch),
    );
    const holders = await call(() => api.listNamespacedPod({ namespace, labelSelector: `${label}=true` }));
    for (const other of holders.items) {
      const name = other.metadata?.name;
      if (!name || name === pod) continue;
      try {
        await call(() =>
          api.patchNamespacedPod({ name, namespace, body: { metadata: { labels: { [label]: null } } } }, mergePatch),
        );
      } catch (error) {
        if (!(error instanceof ApiException && error.code === 404)) throw error;
      }
    }
  }

  async function labelWhileLeading(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await labelOnce();
        return;
      } catch (error) {
        onError(error);
      }
      await new Promise((resolve) => setTimeout(resolve, options.retryMs));
    }
  }

  return elector.subscribe((event) => {
    if (event.type === "became-leader") {
      void labelWhileLeading(event.signal);
    } else if (event.type === "lost-leadership" && event.released) {
      call(() =>
        api.patchNamespacedPod({ name: pod, namespace, body: { metadata: { labels: { [label]: null } } } }, mergePatch),
      ).catch(onError);
    }
  });
}
