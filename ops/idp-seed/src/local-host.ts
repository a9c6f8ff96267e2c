/**
 * Whether a URL names the local host (localhost, *.localhost, 127.0.0.0/8, ::1), where the local stack's IdP runs.
 * The same rule as `isLoopbackHost` of `@svc/sdk` (sdk/test/address.test.ts checks that they agree).
 */
export function isLocalHostUrl(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase();
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}
