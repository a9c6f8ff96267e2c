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
  /** Clock in milliseconds since the epoch (tests of the schedule pass their own). Default `Date.now`. */
  now?: () => number;
  /** False: no timer, renew only on demand in `current()` (tests of the on-demand path). Default true. */
  backgroundRenewal?: boolean;
  /** Arms the renewal timer (tests of the schedule pass their own). Default `setTimeout`, unref'd. */
  timers?: RenewalTimers;
}

export interface RenewalTimers {
  set(run: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: RenewalTimers = {
  set(run, delayMs) {
    const handle = setTimeout(run, delayMs);
    handle.unref?.();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** An access token is used only while it is valid for at least this long (clock skew, time in flight). */
export const EXPIRY_SKEW_MS = 5_000;
/** Longest delay `setTimeout` takes (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;
/** Retries of a failed renewal, while the access token is still valid: 1 s, 2 s, 4 s, ... at most 60 s apart. */
export const RETRY_MIN_MS = 1_000;
export const RETRY_MAX_MS = 60_000;

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

function asSdkError(error: unknown): SdkError {
  return error instanceof SdkError
    ? error
    : new SdkError("SDK_REFRESH_FAILED", `token renewal failed: ${String(error)}`, {}, { cause: error });
}

/**
 * Holds the access and refresh tokens and renews the access token before it expires: an unref'd timer fires at
 * `exp - min(renew_before_seconds, lifetime / 2)`, and every call checks the same deadline on demand.
 *
 * A failed renewal does not fail calls while the access token is still valid (until `exp - EXPIRY_SKEW_MS`):
 * `current()` keeps returning it and renewal is retried with a bounded backoff (`RETRY_MIN_MS` doubling up to
 * `RETRY_MAX_MS`, by the timer and by calls, one request at a time). Once the access token is no longer valid,
 * every call renews first and a failure is thrown (`SDK_REFRESH_FAILED`, `SDK_REFRESH_TOKEN_EXPIRED`).
 */
export class TokenSource {
  #access: string | undefined;
  #refresh: string | undefined;
  #times: Times = { expiresAt: undefined, renewAt: undefined };
  /** Failed renewals since the last success, and when the next attempt is due (backoff). */
  #failures = 0;
  #retryAt: number | undefined;
  #inFlight: Promise<void> | undefined;
  #timer: unknown;
  #closed = false;
  readonly #options: TokenSourceOptions;
  readonly #now: () => number;
  readonly #timers: RenewalTimers;

  constructor(options: TokenSourceOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#timers = options.timers ?? REAL_TIMERS;
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
    if (!this.hasCredentials) return undefined;
    if (this.#access === undefined) {
      await this.renew();
      return this.#access;
    }
    const now = this.#now();
    const { renewAt, expiresAt } = this.#times;
    if (renewAt === undefined || now < renewAt) return this.#access;
    if (this.#refresh === undefined) {
      if (expiresAt !== undefined && now >= expiresAt) {
        throw new SdkError(
          "SDK_ACCESS_TOKEN_EXPIRED",
          "the access token has expired and no refresh_token was given; obtain a new access token",
          { subject: "access_token" },
        );
      }
      return this.#access;
    }
    if (expiresAt !== undefined && now < expiresAt - EXPIRY_SKEW_MS) {
      // Still valid: renew when allowed by the backoff, and keep the current token if that fails.
      const backingOff = this.#retryAt !== undefined && now < this.#retryAt;
      if (this.#inFlight === undefined && backingOff) return this.#access;
      await this.renew().catch(() => undefined);
      return this.#access;
    }
    await this.renew();
    return this.#access;
  }

  /** Renews the access token now with the refresh token (one request at a time); a failure is thrown. */
  renew(): Promise<void> {
    this.#inFlight ??= this.#renewOnce()
      .catch((error: unknown) => {
        this.#failed();
        throw asSdkError(error);
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
  }

  async #renewOnce(): Promise<void> {
    const refresh = this.#refresh;
    const endpoint = this.#options.tokenEndpoint;
    if (refresh === undefined || endpoint === undefined) {
      throw new SdkError("SDK_REFRESH_FAILED", "no refresh_token / token endpoint to renew the access token", {
        subject: "refresh_token",
      });
    }
    const refreshExp = readTimes(refresh, 0, this.#now()).expiresAt;
    if (refreshExp !== undefined && this.#now() >= refreshExp) {
      throw new SdkError(
        "SDK_REFRESH_TOKEN_EXPIRED",
        `the refresh token expired at ${new Date(refreshExp).toISOString()}; log in again (scope offline_access) and pass the new refresh_token`,
        { subject: "refresh_token" },
      );
    }
    const tokens = await refreshAccessToken({
      tokenEndpoint: endpoint,
      clientId: this.#options.clientId,
      refreshToken: refresh,
    });
    if (this.#closed) return;
    this.#failures = 0;
    this.#retryAt = undefined;
    this.#refresh = tokens.refreshToken;
    this.#adopt(tokens.accessToken);
    this.#options.onTokensRenewed?.({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
  }

  /** Records a failed renewal: the next attempt waits 1 s, 2 s, 4 s, ... (at most RETRY_MAX_MS). */
  #failed(): void {
    this.#failures += 1;
    const backoff = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.#failures - 1, 30));
    this.#retryAt = this.#now() + backoff;
    this.#schedule();
  }

  #adopt(access: string): void {
    this.#access = access;
    this.#times = readTimes(access, this.#options.renewBeforeSeconds, this.#now());
    this.#schedule();
  }

  /**
   * Arms the timer for the next renewal: at `renewAt`, or after a failure at the backoff's retry time while the
   * access token is still valid (after that, calls renew on demand and report failures).
   */
  #schedule(): void {
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
    const { renewAt, expiresAt } = this.#times;
    if (this.#closed || this.#options.backgroundRenewal === false) return;
    if (this.#refresh === undefined || renewAt === undefined) return;
    const at = Math.max(renewAt, this.#retryAt ?? renewAt);
    if (this.#failures > 0 && expiresAt !== undefined && at >= expiresAt - EXPIRY_SKEW_MS) return;
    // setTimeout cannot wait longer than MAX_TIMER_DELAY_MS; a timer that fires before `at` re-arms.
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, at - this.#now()));
    this.#timer = this.#timers.set(() => {
      this.#timer = undefined;
      if (this.#now() < at) {
        this.#schedule();
        return;
      }
      // A failure is recorded by renew() (which schedules the retry); calls report it once the token expires.
      this.renew().catch(() => undefined);
    }, delay);
  }
}
