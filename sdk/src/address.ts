import { isIP } from "node:net";

export interface HostPort {
  host: string;
  port: number;
}

const HOST_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

/** Parses `host:port` or `[ipv6]:port`; undefined when the text is not one. */
export function parseAddress(address: string): HostPort | undefined {
  const match = HOST_PORT.exec(address);
  if (!match) return undefined;
  const host = match[1] ?? match[2] ?? "";
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  if (match[1] !== undefined && isIP(host) !== 6) return undefined;
  return { host, port };
}

/** True for an IPv4 or IPv6 literal. */
export function isIpLiteral(host: string): boolean {
  return isIP(host) !== 0;
}

/**
 * True for hosts that never leave the machine: `localhost`, `*.localhost`, 127.0.0.0/8 and `::1` (bracketed or
 * not). Plain HTTP to the IdP is accepted only there, and only there does the renewal send
 * `X-Forwarded-Proto: https`.
 *
 * The same rule as `wantsForwardedProto` in `@svc/token` (test/address.test.ts checks that the two agree), kept
 * separate on purpose: the SDK is a client library for any OAuth token endpoint (`idp.token_endpoint`), while
 * `@svc/token` is the operators' CLI (commander, the seeded users of `@svc/idp-seed`) and builds Keycloak realm
 * URLs; the SDK does not take it as a runtime dependency.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.toLowerCase().replace(/^\[|\]$/g, "");
  return (
    bare === "localhost" ||
    bare.endsWith(".localhost") ||
    bare === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
  );
}
