import { isLoopbackHost } from "@svc/common";

/**
 * Whether a URL names the local host (`isLoopbackHost`: localhost, *.localhost, 127.0.0.0/8, ::1), where the local
 * stack's IdP runs.
 */
export function isLocalHostUrl(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}
