import type {
  V1Container,
  V1EnvVar,
  V1ObjectMeta,
  V1PodSpec,
  V1PodTemplateSpec,
  V1Probe,
} from "@kubernetes/client-node";

/** One rendered object, as `helm template` prints it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta & { name: string };
  spec?: Record<string, unknown>;
  [field: string]: unknown;
}

/** Splits and parses `helm template` output (documents separated by `---`, comments and empty ones dropped). */
export function parseManifests(yaml: string): Manifest[] {
  const parsed = Bun.YAML.parse(yaml) as unknown;
  const docs = Array.isArray(parsed) ? parsed : [parsed];
  return docs.filter((doc): doc is Manifest => doc !== null && typeof doc === "object" && "kind" in doc);
}

export const WORKLOAD_KINDS = ["Deployment", "StatefulSet"] as const;

export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) {
    const names = manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(", ");
    throw new Error(`no ${kind}/${name} among ${names}`);
  }
  return found;
}

/** The workload (Deployment or StatefulSet) named `name`. */
export function workload(manifests: Manifest[], name: string): Manifest {
  const found = manifests.find(
    (m) => (WORKLOAD_KINDS as readonly string[]).includes(m.kind) && m.metadata.name === name,
  );
  if (!found) throw new Error(`no workload ${name}`);
  return found;
}

export const podTemplate = (manifest: Manifest) => (manifest.spec as { template: V1PodTemplateSpec }).template;
export const podSpec = (manifest: Manifest) => podTemplate(manifest).spec as V1PodSpec;

/** Every container of a Pod spec, main and init (the native sidecars), with the kind it is. */
export function containersOf(spec: V1PodSpec): V1Container[] {
  return [...(spec.initContainers ?? []), ...spec.containers];
}

export function container(spec: V1PodSpec, name: string): V1Container {
  const found = containersOf(spec).find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

/** The service a container runs: the last path segment of its image before the tag (`svc/endpoint:0.1.0`). */
export function serviceOf(c: V1Container): string {
  const match = /\/([^/:]+):[^/]+$/.exec(c.image ?? "");
  if (!match?.[1]) throw new Error(`container ${c.name}: image ${c.image} names no service`);
  return match[1];
}

/** What a Pod's downward API and Secrets give, for turning a container's env into a process env. */
export interface PodFacts {
  pod: string;
  podIp: string;
  namespace: string;
  secret: (name: string, key: string) => string;
}

/** A container's env as the process would see it (HOSTNAME as the kubelet sets it). */
export function processEnv(c: V1Container, facts: PodFacts): Record<string, string> {
  const env: Record<string, string> = { HOSTNAME: facts.pod };
  for (const variable of c.env ?? []) env[variable.name] = resolveValue(variable, facts);
  return env;
}

function resolveValue(variable: V1EnvVar, facts: PodFacts): string {
  if (variable.value !== undefined) return variable.value;
  const field = variable.valueFrom?.fieldRef?.fieldPath;
  if (field === "metadata.name") return facts.pod;
  if (field === "metadata.namespace") return facts.namespace;
  if (field === "status.podIP") return facts.podIp;
  const secret = variable.valueFrom?.secretKeyRef;
  if (secret) return facts.secret(secret.name ?? "", secret.key);
  throw new Error(`env ${variable.name}: unsupported source ${JSON.stringify(variable.valueFrom)}`);
}

/** The Secret item mounted at `path` in container `c` of `spec`, if a secret volume puts one there. */
export function mountedSecretItem(
  spec: V1PodSpec,
  c: V1Container,
  path: string,
): { secret: string; key: string } | undefined {
  for (const mount of c.volumeMounts ?? []) {
    if (!path.startsWith(`${mount.mountPath}/`)) continue;
    const volume = spec.volumes?.find((v) => v.name === mount.name);
    const relative = path.slice(mount.mountPath.length + 1);
    const item = volume?.secret?.items?.find((i) => i.path === relative);
    if (volume?.secret?.secretName && item) return { secret: volume.secret.secretName, key: item.key };
  }
  return undefined;
}

/** The container port a probe targets (by name or number). */
export function probePort(c: V1Container, probe: V1Probe): number {
  const port = probe.httpGet?.port;
  if (typeof port === "number") return port;
  const found = c.ports?.find((p) => p.name === port);
  if (!found) throw new Error(`container ${c.name}: probe port ${port} is not one of its ports`);
  return found.containerPort;
}
