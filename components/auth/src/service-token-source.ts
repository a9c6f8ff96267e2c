import { backoffMs } from "@svc/common";
import { decodeJwt } from "jose";
import type { Logger } from "pino";
import { AuthConfigError, AuthError } from "./errors.ts";
import { DISCOVERY_TIMEOUT_MS, discoveryDocument } from "./oidc-discovery.ts";
import type { ServiceCredentials } from "./service-credentials.ts";

/** The tenant of the components' own calls: the `tenant_id` the seed's hardcoded mapper puts in their tokens. */
const INTERNAL_TENANT_ID = "svc-internal";

/** What an outgoing internal call carries: `authorization: Bearer <accessToken>` (none when empty), `x-tenant-id`. */
export interface ServiceToken {
  accessToken: string;
  tenantId: string;
}

export interface ServiceTokenSourceOptions {
  /** `SVC_AUTH_ISSUER`; the token endpoint comes from its discovery document. Unused when `credentials` is. */
  issuer: string | undefined;
  /** `parseServiceCredentials(...)`; `undefined` (auth disabled): no token, tenant `svc-internal`, no IdP call. */
  credentials: ServiceCredentials | undefined;
  logger: Logger;
  /** When to renew, as a fraction of the token's lifetime (default 0.7). */
  refreshAt?: number;
  /** Per-request timeout of the discovery and token calls (default 5 s). */
  timeoutMs?: number;
}

export interface ServiceTokenSource {
  /**
   * Gets the first token. Rejects with `AUTH_SERVICE_CREDENTIALS_REJECTED` (not retryable) when the IdP refuses the
   * client id or secret, `AUTH_IDP_UNAVAILABLE` (`canRetry`) when it cannot be reached, `AuthConfigError` on
   * `SVC_AUTH_ISSUER` when discovery names another issuer. Resolves at once when auth is disabled.
   */
  start(): Promise<void>;
  /**
   * The current token (cached; renewed in the background at `refreshAt` of its lifetime). Once the token held has
   * expired (renewals failed), fetches one and rejects with the typed error if it cannot.
   */
  token(): Promise<ServiceToken>;
  /** Stops the renewal timer. */
  close(): void;
}

const DISABLED_TOKEN: ServiceToken = Object.freeze({ accessToken: "", tenantId: INTERNAL_TENANT_ID });

/** After a failed fetch with no valid token held, `token()` answers that failure for this long (no IdP flood). */
const FAILURE_HOLD_MS = 500;

/** Backoff cap of the background renewal: short while the IdP is down, long while it refuses our credentials. */
const RENEWAL_BACKOFF_MAX_MS = { retryable: 5_000, rejected: 60_000 } as const;

interface Held {
  token: ServiceToken;
  /** Local clock, taken before the request went out: the token is renewed and dropped early rather than late. */
  obtainedAt: number;
  expiresAt: number;
}

/** The error codes of an OAuth token response that mean "these client credentials are not accepted". */
const REJECTING_ERRORS = new Set(["invalid_client", "unauthorized_client"]);

/** The token's `tenant_id` claim (the IdP just issued it over TLS or loopback; the receiver verifies it). */
function tenantOf(accessToken: string, clientId: string): string {
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(accessToken);
  } catch (cause) {
    throw new AuthError("AUTH_TOKEN_MALFORMED", `the IdP issued client ${clientId} an access token that is not a JWT`, {
      cause,
    });
  }
  const tenant = claims.tenant_id;
  if (typeof tenant !== "string" || tenant === "") {
    throw new AuthError(
      "AUTH_CLAIM_MISSING",
      `the IdP issued client ${clientId} a token without tenant_id; the client needs the tenant_id claim mapper ` +
        "(ops/idp-seed seeds it)",
      { subject: "tenant_id" },
    );
  }
  return tenant;
}

/**
 * A component's own access token for its calls to the other components (client-credentials grant of
 * `credentials` at the token endpoint of `issuer`'s discovery document, shared with the verifier of the process).
 * One fetch at a time; renewed in the background at `refreshAt` of its lifetime; a failed renewal keeps the current
 * token until it expires and retries with `backoffMs`. The secret never appears in a log line or an error.
 */
export function createServiceTokenSource(options: ServiceTokenSourceOptions): ServiceTokenSource {
  const { credentials, logger } = options;
  const refreshAt = options.refreshAt ?? 0.7;
  if (!(refreshAt > 0 && refreshAt < 1)) throw new RangeError(`refreshAt must be in (0, 1), got ${refreshAt}`);
  const timeoutMs = options.timeoutMs ?? DISCOVERY_TIMEOUT_MS;
  if (!credentials) {
    return { start: async () => {}, token: async () => DISABLED_TOKEN, close: () => {} };
  }
  const issuer = options.issuer;
  if (issuer === undefined) {
    throw new AuthConfigError("SVC_AUTH_ISSUER", "required for the service token source while auth is on");
  }
  const { clientId } = credentials;

  let held: Held | undefined;
  let inFlight: Promise<Held> | undefined;
  let lastFailure: { error: unknown; at: number } | undefined;
  let renewalFailures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  async function tokenEndpoint(): Promise<string> {
    const doc = await discoveryDocument(issuer as string, { timeoutMs });
    if (typeof doc.token_endpoint !== "string" || !/^https?:\/\//.test(doc.token_endpoint)) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", "OIDC discovery has no usable token_endpoint");
    }
    return doc.token_endpoint;
  }

  async function fetchToken(): Promise<Held> {
    const endpoint = await tokenEndpoint();
    const obtainedAt = Date.now();
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: clientId,
          client_secret: (credentials as ServiceCredentials).clientSecret,
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", `token request to ${endpoint} failed: ${String(cause)}`, { cause });
    }
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!response.ok) {
      const error = typeof body?.error === "string" ? body.error : "";
      const description = typeof body?.error_description === "string" ? `: ${body.error_description}` : "";
      const reason = `HTTP ${response.status} ${error}${description}`.trim();
      if (response.status === 401 || REJECTING_ERRORS.has(error)) {
        throw new AuthError(
          "AUTH_SERVICE_CREDENTIALS_REJECTED",
          `the IdP refused the client credentials of ${clientId} (${reason}); check SVC_AUTH_CLIENT_ID and ` +
            "SVC_AUTH_CLIENT_SECRET (or SVC_AUTH_CLIENT_SECRET_FILE)",
          { subject: "SVC_AUTH_CLIENT_SECRET" },
        );
      }
      throw new AuthError("AUTH_IDP_UNAVAILABLE", `token request to ${endpoint} returned ${reason}`);
    }
    const accessToken = body?.access_token;
    const expiresIn = body?.expires_in;
    if (typeof accessToken !== "string" || typeof expiresIn !== "number" || !(expiresIn > 0)) {
      throw new AuthError("AUTH_IDP_UNAVAILABLE", `token response of ${endpoint} has no access_token / expires_in`);
    }
    const tenantId = tenantOf(accessToken, clientId);
    return { token: { accessToken, tenantId }, obtainedAt, expiresAt: obtainedAt + expiresIn * 1000 };
  }

  function schedule(ms: number): void {
    clearTimeout(timer);
    if (closed) return;
    timer = setTimeout(renew, Math.max(0, ms));
    timer.unref?.();
  }

  /** One fetch at a time; a success replaces the token held and schedules its renewal. */
  function obtain(): Promise<Held> {
    if (inFlight) return inFlight;
    const pending = fetchToken().then(
      (fresh) => {
        held = fresh;
        lastFailure = undefined;
        renewalFailures = 0;
        const lifetime = fresh.expiresAt - fresh.obtainedAt;
        logger.info({ clientId, expiresInMs: lifetime }, "auth: service token obtained");
        schedule(fresh.obtainedAt + lifetime * refreshAt - Date.now());
        return fresh;
      },
      (error: unknown) => {
        lastFailure = { error, at: Date.now() };
        throw error;
      },
    );
    inFlight = pending;
    pending.then(
      () => {
        inFlight = undefined;
      },
      () => {
        inFlight = undefined;
      },
    );
    return pending;
  }

  function renew(): void {
    if (closed) return;
    obtain().catch((error: unknown) => {
      renewalFailures++;
      const rejected = error instanceof AuthError && !error.canRetry;
      const retryInMs = backoffMs(
        renewalFailures,
        rejected ? RENEWAL_BACKOFF_MAX_MS.rejected : RENEWAL_BACKOFF_MAX_MS.retryable,
      );
      const expiresInMs = held ? held.expiresAt - Date.now() : 0;
      logger[rejected ? "error" : "warn"](
        { clientId, code: (error as { code?: string }).code, reason: (error as Error).message, retryInMs, expiresInMs },
        "auth: service token renewal failed; the current token is used until it expires",
      );
      schedule(retryInMs);
    });
  }

  return {
    async start() {
      await obtain();
    },
    async token() {
      const now = Date.now();
      if (held && now < held.expiresAt) return held.token;
      if (!inFlight && lastFailure && now - lastFailure.at < FAILURE_HOLD_MS) throw lastFailure.error;
      return (await obtain()).token;
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
