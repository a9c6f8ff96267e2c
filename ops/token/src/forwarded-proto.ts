import { isLocalHostUrl } from "@svc/idp-seed";

/**
 * Whether a token call to this IdP URL gets `X-Forwarded-Proto: https`: only plain HTTP to the local host
 * (`isLocalHostUrl`: localhost, *.localhost, 127.0.0.0/8, ::1), where the IdP's "HTTPS required" would otherwise
 * refuse a same-host caller (spec: "Connection security"). A non-local plain-HTTP URL is sent as is: use HTTPS there.
 */
export function wantsForwardedProto(url: string): boolean {
  return new URL(url).protocol === "http:" && isLocalHostUrl(url);
}
