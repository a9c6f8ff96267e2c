import { join } from "node:path";
import type { StackContext, StackService } from "../context.ts";
import { ensureGoBinary } from "../installers.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";

const TOOL = {
  name: "etcd",
  moduleDir: join(import.meta.dir, "..", "..", "..", "tools", "etcd"),
  pkg: "go.etcd.io/etcd/server/v3",
};
const clientUrl = (ctx: StackContext) => `http://127.0.0.1:${ctx.config.etcd.port}`;

/** etcd: the kube-apiserver's storage. Debian's etcd-server (3.4) is older than Kubernetes 1.36 accepts. */
export const etcd: StackService = {
  name: "etcd",
  after: [],
  readiness: { timeoutMs: 60_000 },
  ports: (ctx) => [ctx.config.etcd.port, ctx.config.etcd.peer_port],

  async install(ctx, task) {
    task.done(await ensureGoBinary(ctx, task, TOOL));
  },

  async start(ctx, task) {
    const bin = await ensureGoBinary(ctx, task, TOOL);
    const peer = `http://127.0.0.1:${ctx.config.etcd.peer_port}`;
    task.update(1, "starting");
    const daemon = await startServer(ctx, this, {
      command: bin,
      args: [
        "--name=svc-local",
        `--data-dir=${join(ctx.stateDir, "etcd")}`,
        `--listen-client-urls=${clientUrl(ctx)}`,
        `--advertise-client-urls=${clientUrl(ctx)}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=svc-local=${peer}`,
        "--log-level=warn",
      ],
    });
    task.done(clientUrl(ctx));
    return daemon;
  },

  async probe(ctx) {
    const response = await fetch(`${clientUrl(ctx)}/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).catch(
      () => undefined,
    );
    if (response?.status !== 200) return false;
    const body = (await response.json().catch(() => ({}))) as { health?: string };
    return body.health === "true";
  },

  address: (ctx) => clientUrl(ctx),
  exports: (ctx) => ({ SVC_STACK_ETCD_URL: clientUrl(ctx) }),
};
