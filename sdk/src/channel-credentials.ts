import { checkServerIdentity } from "node:tls";
import { type ChannelCredentials, type ChannelOptions, credentials, Metadata } from "@grpc/grpc-js";
import { isIpLiteral, parseAddress } from "./address.ts";
import type { TargetSettings } from "./client-options.ts";

export interface Channel {
  credentials: ChannelCredentials;
  options: ChannelOptions;
}

/**
 * Channel credentials of one target. Secure: TLS with `caCert` (or the system roots) composed with call
 * credentials that add `authorization: Bearer <token>` (grpc-js allows call credentials only on a secure
 * channel). Insecure: no call credentials; the client adds the header to each call's metadata instead.
 *
 * Bun's TLS refuses an IP address as SNI server name, which grpc-js sends for an IP target. For IP targets the
 * SNI name becomes `localhost` (grpc.ssl_target_name_override) while the certificate is still checked against
 * the dialled IP, so certificates with an `IP:` subjectAltName keep working.
 */
export function channelFor(target: TargetSettings, bearer: () => Promise<string | undefined>): Channel {
  if (!target.secure) return { credentials: credentials.createInsecure(), options: {} };
  const host = parseAddress(target.address)?.host ?? "";
  const options: ChannelOptions = {};
  const verify = isIpLiteral(host)
    ? {
        checkServerIdentity: (_name: string, cert: Parameters<typeof checkServerIdentity>[1]) =>
          checkServerIdentity(host, cert),
      }
    : {};
  if (isIpLiteral(host)) options["grpc.ssl_target_name_override"] = "localhost";
  const tls = credentials.createSsl(target.caCert ?? null, null, null, verify);
  const callCredentials = credentials.createFromMetadataGenerator((_params, callback) => {
    bearer().then(
      (token) => {
        const metadata = new Metadata();
        if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
        callback(null, metadata);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  });
  return { credentials: credentials.combineChannelCredentials(tls, callCredentials), options };
}
