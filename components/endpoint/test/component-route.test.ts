import { afterEach, expect, test } from "bun:test";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { waitFor } from "@svc/common";
import { makeKubeClient } from "@svc/kube";
import type { TCPSocketListener } from "bun";
import { ComponentRoute } from "../src/component-route.ts";
import { labelDiscovery } from "../src/discovery.ts";

// An apiserver that accepts connections and never answers (what a stalled one does; the stack's cannot be stalled
// for one test): the route's probe must end at its discovery timeout and the route go on probing.
let silent: TCPSocketListener | undefined;
let route: ComponentRoute | undefined;
afterEach(async () => {
  await route?.stop();
  route = undefined;
  silent?.stop(true);
  silent = undefined;
});

test("a Pod list that never answers ends the probe at the discovery timeout, says why, and the route keeps probing", async () => {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  silent = listener;
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromOptions({
    clusters: [{ name: "silent", server: `http://127.0.0.1:${listener.port}`, skipTLSVerify: true }],
    users: [{ name: "nobody" }],
    contexts: [{ name: "silent", cluster: "silent", user: "nobody" }],
    currentContext: "silent",
  });
  const discover = labelDiscovery(makeKubeClient(kubeconfig, CoreV1Api), "default", "compute");
  let lists = 0;
  const counted = () => {
    lists += 1;
    return discover();
  };
  const probing = new ComponentRoute("compute", counted, 100, 300);
  route = probing;
  void probing.start();

  const error = await waitFor("the discovery timeout in the route's state", async () => probing.snapshot().error, {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
  expect(error).toContain("no answer within 300 ms");
  expect(probing.current()).toBeUndefined();
  await waitFor("a later probe lists again", async () => (lists >= 3 ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
});
