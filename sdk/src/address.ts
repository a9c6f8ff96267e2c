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

/** Hosts that never leave the machine (`@svc/common`): plain HTTP to the IdP is accepted only there. */
export { isLoopbackHost } from "@svc/common";
