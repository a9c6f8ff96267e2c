import { decodeJwt } from "jose";
import type { RenewedTokens } from "./client-options.ts";
import { SdkError } from "./errors.ts";
import { refreshAccessToken } from "./refresh-access-token.ts";

export interface TokenSourceOptions {
  accessToken: string | undefined;
  refreshToken: string | undefined;
  tokenEndpoint: string | undefined;
  clientId: string;
  renewBeforeSeconds: number;
  onTokensRenewed?: ((tokens: RenewedTokens) => void) | undefined;
  /** Clock in milliseconds (tests of the schedule pass their own). */
  now?: () => number;
}

interface Times {
  /** Expiry in ms since the epoch, undefined when the token carries no readable `exp`. */
  expiresAt: number | undefined;
  /** When to renew, in ms since the epoch. */
  renewAt: number | undefined;
}

/** Reads `exp`/`iat` from a JWT without verifying it (the server verifies; the client only needs the times). */
function readTimes(token: string, renewBeforeSeconds: number, nowMs: number): Times {
  let exp: number | undefined;
  let iat: number | undefined;
  try {
    const payload = decodeJwt(token);
    exp = payload.exp;
    iat = payload.iat;
  } catch {
    return { expiresAt: undefined, renewAt: undefined };
  }
  if (exp === undefined) return { expiresAt: undefined, renewAt: undefined };
  const issuedAt = iat ?? Math.floor(nowMs / 1000);
  const lifetime = Math.max(0, exp - issuedAt);
  const before = Math.min(renewBeforeSeconds, lifetime / 2);
  return { expiresAt: exp * 1000, renewAt: (exp - before) * 1000 };
}

/**
 * Holds the access and refresh tokens and renews the access token before it expires: an unref'd timer fires at
 * `exp - min(renew_before_seconds, lifetime / 2)`, and every call checks the same deadline on demand. A failed
 * background renewal is kept and thrown by the next `current()` call.
 */
export class TokenSource {
  #access: string | undefined;
  #refresh: string | undefined;
  #times: Times = { expiresAt: undefined, renewAt: undefined };
  #pending: SdkError | undefined;
  #inFlight: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #options: TokenSourceOptions;
  readonly #now: () => number;

  constructor(options: TokenSourceOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#access = options.accessToken;
    this.#refresh = options.refreshToken;
    if (this.#access !== undefined) this.#adopt(this.#access);
  }

  /** True when there is any credential to send. */
  get hasCredentials(): boolean {
    return this.#access !== undefined || this.#refresh !== undefined;
  }

  /** The access token to send now (renewing first when due), or undefined without credentials. */
  async current(): Promise<string | undefined> {
    if (this.#pending) {
      const error = this.#pending;
      this.#pending = undefined;
      throw error;
    }
    if (!this.hasCredentials) return undefined;
    const now = this.#now();
    const due = this.#access === undefined || (this.#times.renewAt !== undefined && now >= this.#times.renewAt);
    if (due && this.#refresh !== undefined) {
      await this.renew();
    } else if (this.#times.expiresAt !== undefined && now >= this.#times.expiresAt) {
      throw new SdkError(
        "SDK_ACCESS_TOKEN_EXPIRED",
        "the access token has expired and no refresh_token was given; obtain a new access token",
        { field: "access_token" },
      );
    }
    return this.#access;
  }

  /** Renews the access token now with the refresh token (one request at a time). */
  renew(): Promise<void> {
    this.#inFlight ??= this.#renewOnce().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #renewOnce(): Promise<void> {
    const refresh = this.#refresh;
    const endpoint = this.#options.tokenEndpoint;
    if (refresh === undefined || endpoint === undefined) {
      throw new SdkError("SDK_REFRESH_FAILED", "no refresh_token / token endpoint to renew the access token", {
        field: "refresh_token",
      });
    }
    const refreshExp = readTimes(refresh, 0, this.#now()).expiresAt;
    if (refreshExp !== undefined && this.#now() >= refreshExp) {
      throw new SdkError(
        "SDK_REFRESH_TOKEN_EXPIRED",
        `the refresh token expired at ${new Date(refreshExp).toISOString()}; log in again (scope offline_access) and pass the new refresh_token`,
        { field: "refresh_token" },
      );
    }
    const tokens = await refreshAccessToken({
      tokenEndpoint: endpoint,
      clientId: this.#options.clientId,
      refreshToken: refresh,
    });
    if (this.#closed) return;
    this.#refresh = tokens.refreshToken;
    this.#adopt(tokens.accessToken);
    this.#options.onTokensRenewed?.({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
  }

  #adopt(access: string): void {
    this.#access = access;
    this.#times = readTimes(access, this.#options.renewBeforeSeconds, this.#now());
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#closed || this.#refresh === undefined || this.#times.renewAt === undefined) return;
    const delay = Math.max(0, this.#times.renewAt - this.#now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.renew().catch((error: unknown) => {
        this.#pending =
          error instanceof SdkError
            ? error
            : new SdkError("SDK_REFRESH_FAILED", `token renewal failed: ${String(error)}`, {}, { cause: error });
      });
    }, delay);
    this.#timer.unref?.();
  }
}
