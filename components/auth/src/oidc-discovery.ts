import { AuthConfigError, AuthError } from "./errors.ts";

/** The fields of an OpenID Provider's discovery document the plane reads (validated by whoever reads each). */
export interface DiscoveryDocument {
  issuer: string;
  jwks_uri?: unknown;
  token_endpoint?: unknown;
}

export interface DiscoveryOptions {
  /** Per-request timeout. */
  timeoutMs?: number;
  /**
   * A fetch of the caller's own (tests): the document is then fetched for this caller alone. Without it, every
   * caller of the process asking for the same issuer shares one fetch and its result.
   */
  fetch?: typeof fetch;
  /** Called when this call went to the network (for the key source's `discoveryFetches`). */
  onFetch?: () => void;
}

export const DISCOVERY_TIMEOUT_MS = 5_000;

/** One successful (or in-flight) discovery per issuer and process: the verifier and the token source share it. */
const shared = new Map<string, Promise<DiscoveryDocument>>();

/** GET `url` as JSON; anything but a JSON 2xx is `AUTH_IDP_UNAVAILABLE` (`canRetry`). */
export async function getIdpJson(
  url: string,
  what: string,
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): Promise<unknown> {
  const doFetch = options.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(url, {
      signal: AbortSignal.timeout(options.timeoutMs ?? DISCOVERY_TIMEOUT_MS),
      headers: { accept: "application/json" },
    });
  } catch (cause) {
    throw new AuthError("AUTH_IDP_UNAVAILABLE", `${what} fetch failed: ${String(cause)}`, { cause });
  }
  if (!response.ok) {
    throw new AuthError("AUTH_IDP_UNAVAILABLE", `${what} fetch returned HTTP ${response.status}`);
  }
  try {
    return await response.json();
  } catch (cause) {
    throw new AuthError("AUTH_IDP_UNAVAILABLE", `${what} is not JSON`, { cause });
  }
}

const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;

async function fetchDiscovery(issuer: string, options: DiscoveryOptions): Promise<DiscoveryDocument> {
  options.onFetch?.();
  const url = discoveryUrl(issuer);
  const doc = (await getIdpJson(url, "OIDC discovery", options)) as Partial<DiscoveryDocument> | null;
  if (typeof doc?.issuer !== "string") {
    throw new AuthError("AUTH_IDP_UNAVAILABLE", `OIDC discovery at ${url} names no issuer`);
  }
  if (doc.issuer !== issuer) {
    // the issuer checked is always the configured SVC_AUTH_ISSUER
    throw new AuthConfigError(
      "SVC_AUTH_ISSUER",
      `is ${JSON.stringify(issuer)}, but the OIDC discovery document ${url} names issuer ` +
        `${JSON.stringify(doc.issuer)}; they must be equal byte for byte (a trailing slash counts), since tokens ` +
        "carry the discovery issuer in iss",
    );
  }
  return doc as DiscoveryDocument;
}

/**
 * `{issuer}/.well-known/openid-configuration`, whose `issuer` must equal `issuer` byte for byte (else
 * `AuthConfigError` on `SVC_AUTH_ISSUER`, both values in the message); unreachable → `AUTH_IDP_UNAVAILABLE`.
 * Shared per issuer within the process (a failure is not kept: the next call fetches again), unless the caller
 * brings its own `fetch`.
 */
export function discoveryDocument(issuer: string, options: DiscoveryOptions = {}): Promise<DiscoveryDocument> {
  if (options.fetch) return fetchDiscovery(issuer, options);
  const known = shared.get(issuer);
  if (known) return known;
  const pending = fetchDiscovery(issuer, options);
  shared.set(issuer, pending);
  pending.catch(() => {
    if (shared.get(issuer) === pending) shared.delete(issuer);
  });
  return pending;
}
