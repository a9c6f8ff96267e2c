import { decodeClaims, parseTokenConfig, readTokenFile, refreshToken, writeTokenFile } from "@svc/token";
import { AuditCliError } from "../errors.ts";

/** Refresh when the access token has less than this left (a forward runs for days; Keycloak tokens live minutes). */
const REFRESH_MARGIN_S = 30;

/**
 * The caller's credentials from the token file `bun run token issue --out` writes: the bearer for each call, read
 * again every time (another process may have refreshed the file), refreshed here with the file's refresh token
 * shortly before it expires, and the tenant from the access token's `tenant_id` claim.
 */
export class TokenSource {
  constructor(
    private readonly path: string,
    private readonly tenantOverride?: string,
  ) {}

  /** `x-tenant-id`: `--tenant-id`, else the token's `tenant_id` claim. */
  tenantId(): string {
    if (this.tenantOverride) return this.tenantOverride;
    const claim = decodeClaims(readTokenFile(this.path).access_token).tenant_id;
    if (typeof claim !== "string" || claim === "") {
      throw new AuditCliError(
        "AUDIT_CLI_TENANT_UNKNOWN",
        `the access token in ${this.path} has no tenant_id claim: give --tenant-id`,
        { subject: this.path },
      );
    }
    return claim;
  }

  /** `Authorization: Bearer …`, refreshed first when it is about to expire and a refresh token is there. */
  async authorization(): Promise<string> {
    let set = readTokenFile(this.path);
    if (set.expires_at - REFRESH_MARGIN_S < Date.now() / 1000 && set.refresh_token) {
      const config = parseTokenConfig(process.env);
      set = await refreshToken(
        { url: config.url, realm: config.realm, clientId: config.clientId, forwardedProto: true },
        set.refresh_token,
      );
      writeTokenFile(this.path, set);
    }
    return `Bearer ${set.access_token}`;
  }
}
