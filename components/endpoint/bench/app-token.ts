/** When the JWT `token` expires (its `exp` claim), in epoch milliseconds; 0 when it has none. */
function expiryOf(token: string): number {
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as {
      exp?: unknown;
    };
    return typeof payload.exp === "number" ? payload.exp * 1000 : 0;
  } catch {
    return 0;
  }
}

/**
 * The application's bearer token over a bench that outlives it. The stack's Keycloak issues access tokens for 300 s
 * (its default); a token taken once at the start makes every call after that end UNAUTHENTICATED, which a probe
 * that waits for recovery cannot tell from a failover that never ends. `fresh()` issues a new one when less than
 * `marginMs` of the current one is left (a token without `exp` is issued again every time).
 */
export class RefreshingToken {
  private token = "";
  private expiresAtMs = 0;

  constructor(
    private readonly issue: () => Promise<string>,
    private readonly marginMs = 60_000,
  ) {}

  async fresh(): Promise<string> {
    if (this.token === "" || Date.now() >= this.expiresAtMs - this.marginMs) {
      this.token = await this.issue();
      this.expiresAtMs = expiryOf(this.token);
    }
    return this.token;
  }

  /** The token last issued (call `fresh()` first). */
  get current(): string {
    return this.token;
  }
}
