/**
 * Whether a token call to this IdP URL gets `X-Forwarded-Proto: https`: only plain HTTP to the local host
 * (localhost, *.localhost, 127.0.0.0/8, ::1), where the IdP's "HTTPS required" would otherwise refuse a
 * same-host caller (spec: "Connection security"). A non-local plain-HTTP URL is sent as is: use HTTPS there.
 */
export function wantsForwardedProto(url: string): boolean {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:") return false;
  const host = parsed.hostname.toLowerCase();
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}
