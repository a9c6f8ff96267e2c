import { readFileSync } from "node:fs";
import {
  type HttpLibrary,
  type KubeConfig,
  Observable,
  type RequestContext,
  ResponseContext,
} from "@kubernetes/client-node";

export interface KubeTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
}

function pem(data: string | undefined, file: string | undefined): string | undefined {
  if (data) return Buffer.from(data, "base64").toString("utf8");
  if (file) return readFileSync(file, "utf8");
  return undefined;
}

/** The TLS material of the kubeconfig's current cluster and user (CA, client certificate, skip-verify). */
export function kubeTls(kubeconfig: KubeConfig): KubeTls {
  const cluster = kubeconfig.getCurrentCluster();
  const user = kubeconfig.getCurrentUser();
  return {
    ca: pem(cluster?.caData, cluster?.caFile),
    cert: pem(user?.certData, user?.certFile),
    key: pem(user?.keyData, user?.keyFile),
    rejectUnauthorized: !(cluster?.skipTLSVerify ?? false),
  };
}

/**
 * client-node 2.x hands its TLS settings to an undici dispatcher, which Bun's fetch ignores: the cluster CA
 * never reaches the TLS layer and every call fails with SELF_SIGNED_CERT_IN_CHAIN. This library sends the
 * request with Bun's fetch and its own `tls` option instead; headers (the bearer token) still come from the
 * KubeConfig's authentication.
 */
export class BunFetchHttpLibrary implements HttpLibrary {
  constructor(private readonly tls: KubeTls) {}

  send(request: RequestContext): Observable<ResponseContext> {
    const body = request.getBody();
    const response = fetch(request.getUrl(), {
      method: request.getHttpMethod().toString(),
      headers: request.getHeaders(),
      body: body as RequestInit["body"],
      signal: request.getSignal() ?? null,
      tls: this.tls,
    }).then((resp) => {
      const headers: Record<string, string> = {};
      resp.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return new ResponseContext(resp.status, headers, {
        text: () => resp.text(),
        binary: async () => Buffer.from(await resp.arrayBuffer()),
        stream: () => resp.body,
      });
    });
    return new Observable(response);
  }
}
