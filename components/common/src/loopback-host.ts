/**
 * True for hosts that never leave the machine: `localhost`, `*.localhost`, 127.0.0.0/8 and `::1` (bracketed or
 * not). The SDK accepts plain HTTP to an IdP only there (and sends `X-Forwarded-Proto: https` there); the audit
 * writer sends S3 bodies unsigned there.
 *
 * One rule for the whole project: `@svc/sdk` re-exports it, `@svc/idp-seed` (and through it `@svc/token`) asks it
 * of a URL's host.
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
