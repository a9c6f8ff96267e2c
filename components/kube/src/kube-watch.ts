import { HttpMethod, type KubeConfig, RequestContext } from "@kubernetes/client-node";
import { kubeTls } from "./bun-fetch-http.ts";

/** One event of a watch stream: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR` (object is a Status). */
export interface KubeWatchEvent<T = unknown> {
  type: string;
  object: T;
}

export interface KubeWatchOptions {
  /** Query parameters besides `watch` (`fieldSelector`, `resourceVersion`, `allowWatchBookmarks`). */
  query?: Record<string, string | undefined>;
  /** Asks the server to end the stream after this many seconds (`timeoutSeconds`); default 60. */
  timeoutSeconds?: number;
  /** The response headers must arrive within this; default 5000 ms. */
  connectTimeoutMs?: number;
  /** The stream counts as broken when nothing arrives for this long; default timeoutSeconds + 10 s. */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
}

/** Why a watch ended other than by the server closing it normally. */
export class KubeWatchError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "KubeWatchError";
  }
}

export type KubeWatch = <T>(
  path: string,
  onEvent: (event: KubeWatchEvent<T>) => void,
  options?: KubeWatchOptions,
) => Promise<void>;

/**
 * The kube-apiserver watch API over Bun's fetch with the kubeconfig's TLS material (client-node's `Watch` uses
 * undici's dispatcher for TLS, which Bun ignores, as with the API clients). `watch(path, onEvent, options)`
 * streams the newline-delimited events of `path?watch=1&...` to `onEvent`; it resolves when the server ends the
 * stream (its `timeoutSeconds`, or the caller's signal) and rejects with `KubeWatchError` on a non-200 answer, a
 * connect or idle timeout, or a broken connection. Resume with the last event's `resourceVersion`.
 */
export function makeKubeWatch(kubeconfig: KubeConfig): KubeWatch {
  const cluster = kubeconfig.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig has no current cluster");
  const tls = kubeTls(kubeconfig);
  return async function watch<T>(
    path: string,
    onEvent: (event: KubeWatchEvent<T>) => void,
    options: KubeWatchOptions = {},
  ): Promise<void> {
    const timeoutSeconds = options.timeoutSeconds ?? 60;
    const url = new URL(cluster.server + path);
    url.searchParams.set("watch", "1");
    url.searchParams.set("timeoutSeconds", String(timeoutSeconds));
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const context = new RequestContext(url.toString(), HttpMethod.GET);
    await kubeconfig.applySecurityAuthentication(context);
    const controller = new AbortController();
    let timedOut: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (ms: number, what: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = what;
        controller.abort();
      }, ms);
    };
    const onAbort = () => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) controller.abort();
    const idleMs = options.idleTimeoutMs ?? timeoutSeconds * 1000 + 10_000;
    try {
      arm(options.connectTimeoutMs ?? 5000, "no answer to the watch request");
      const response = await fetch(url, {
        headers: context.getHeaders(),
        signal: controller.signal,
        tls,
      });
      if (response.status !== 200) {
        const text = await response.text().catch(() => "");
        throw new KubeWatchError(`watch ${path}: HTTP ${response.status} ${text.slice(0, 200)}`, response.status);
      }
      arm(idleMs, "watch stream idle");
      const body = response.body;
      if (!body) return;
      const decoder = new TextDecoder();
      let buffered = "";
      for await (const chunk of body) {
        arm(idleMs, "watch stream idle");
        buffered += decoder.decode(chunk, { stream: true });
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line) onEvent(JSON.parse(line) as KubeWatchEvent<T>);
          newline = buffered.indexOf("\n");
        }
      }
    } catch (error) {
      if (options.signal?.aborted && timedOut === undefined) return;
      if (error instanceof KubeWatchError) throw error;
      throw new KubeWatchError(`watch ${path}: ${timedOut ?? String(error)}`, undefined, { cause: error });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  };
}
