import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StackContext, StackService } from "../context.ts";
import { ensureGoBinary } from "../installers.ts";
import { PROBE_TIMEOUT_MS, startServer } from "../start-server.ts";

const TOOL = {
  name: "kube-apiserver",
  moduleDir: join(import.meta.dir, "..", "..", "..", "tools", "kube-apiserver"),
  pkg: "k8s.io/kubernetes/cmd/kube-apiserver",
};

const dir = (ctx: StackContext) => join(ctx.stateDir, "kube");
const server = (ctx: StackContext) => `https://127.0.0.1:${ctx.config.kube_apiserver.port}`;
/** The apiserver's self-signed serving certificate; its chain carries the CA clients trust. */
const caFile = (ctx: StackContext) => join(dir(ctx), "certs", "apiserver.crt");
export const kubeconfigPath = (ctx: StackContext) => join(dir(ctx), "kubeconfig");

function adminToken(ctx: StackContext): string {
  return readFileSync(join(dir(ctx), "admin-token"), "utf8").trim();
}

/** Keys, the static token of the admin (group system:masters, so RBAC never stops it) and the kubeconfig. */
function writeIdentity(ctx: StackContext): void {
  const base = dir(ctx);
  mkdirSync(join(base, "certs"), { recursive: true });
  if (!existsSync(join(base, "sa.key"))) {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    writeFileSync(join(base, "sa.key"), privateKey, { mode: 0o600 });
    writeFileSync(join(base, "sa.pub"), publicKey);
  }
  if (!existsSync(join(base, "admin-token"))) {
    writeFileSync(join(base, "admin-token"), randomBytes(24).toString("hex"), { mode: 0o600 });
  }
  writeFileSync(join(base, "tokens.csv"), `${adminToken(ctx)},svc-admin,svc-admin,"system:masters"\n`, {
    mode: 0o600,
  });
  const kubeconfig = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: svc-local",
    "    cluster:",
    `      server: ${server(ctx)}`,
    `      certificate-authority: ${caFile(ctx)}`,
    "users:",
    "  - name: svc-admin",
    "    user:",
    `      token: ${adminToken(ctx)}`,
    "contexts:",
    "  - name: svc-local",
    "    context:",
    "      cluster: svc-local",
    "      user: svc-admin",
    "      namespace: default",
    "current-context: svc-local",
    "",
  ].join("\n");
  writeFileSync(kubeconfigPath(ctx), kubeconfig, { mode: 0o600 });
}

export const kubeApiserver: StackService = {
  name: "kube-apiserver",
  after: ["etcd"],
  readiness: { timeoutMs: 120_000, intervalMs: 500 },
  ports: (ctx) => [ctx.config.kube_apiserver.port],

  async install(ctx, task) {
    task.done(await ensureGoBinary(ctx, task, TOOL));
  },

  async start(ctx, task) {
    const bin = await ensureGoBinary(ctx, task, TOOL);
    writeIdentity(ctx);
    const base = dir(ctx);
    task.update(1, "starting");
    const daemon = await startServer(ctx, this, {
      command: bin,
      args: [
        `--etcd-servers=http://127.0.0.1:${ctx.config.etcd.port}`,
        `--etcd-prefix=/svc-local`,
        `--cert-dir=${join(base, "certs")}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${ctx.config.kube_apiserver.port}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${join(base, "sa.pub")}`,
        `--service-account-signing-key-file=${join(base, "sa.key")}`,
        `--token-auth-file=${join(base, "tokens.csv")}`,
        // RBAC, as in a cluster: the chart's Roles can be tested; the admin is in system:masters.
        "--authorization-mode=RBAC",
        // No controller-manager runs here to create default ServiceAccounts for new namespaces.
        "--disable-admission-plugins=ServiceAccount",
        "--enable-priority-and-fairness=false",
        "--v=0",
      ],
    });
    task.done(server(ctx));
    return daemon;
  },

  async probe(ctx) {
    if (!existsSync(caFile(ctx))) return false;
    const response = await fetch(`${server(ctx)}/readyz`, {
      headers: { authorization: `Bearer ${adminToken(ctx)}` },
      tls: { ca: readFileSync(caFile(ctx), "utf8") },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    }).catch(() => undefined);
    return response?.status === 200;
  },

  address: (ctx) => server(ctx),
  exports: (ctx) => ({ SVC_STACK_KUBECONFIG: kubeconfigPath(ctx) }),
};
