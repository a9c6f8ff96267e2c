import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidArgument } from "./errors.ts";
import { type AuditQuery, canonicalQuery } from "./query-request.ts";

/** Where the next page starts: after this `(time, id)` in the stable order. */
export interface PagePosition {
  /** UTC, microseconds, as the index returns it (`YYYY-MM-DDTHH:MM:SS.ffffffZ`). */
  time: string;
  id: string;
}

const VERSION = 1;
const POSITION_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function queryHash(query: AuditQuery): string {
  return new Bun.CryptoHasher("sha256").update(canonicalQuery(query)).digest("base64url").slice(0, 22);
}

/**
 * Opaque page tokens: `base64url(JSON [version, time, id, query hash]) "." base64url(HMAC-SHA256)`, the MAC over
 * the tenant and the payload with the API's key. A token is thus bound to its tenant (the MAC fails for another) and
 * to its query (the hash must match), and cannot be altered; every replica with the same key accepts it.
 */
export class PageTokens {
  constructor(private readonly key: string) {}

  private mac(tenantId: string, payload: string): Buffer {
    return createHmac("sha256", this.key).update(`${tenantId}\n${payload}`).digest();
  }

  encode(tenantId: string, query: AuditQuery, position: PagePosition): string {
    const payload = Buffer.from(JSON.stringify([VERSION, position.time, position.id, queryHash(query)])).toString(
      "base64url",
    );
    return `${payload}.${this.mac(tenantId, payload).toString("base64url")}`;
  }

  /** The position a token names; `AUDIT_API_INVALID_ARGUMENT` (`page_token`) when malformed, altered or foreign. */
  decode(tenantId: string, query: AuditQuery, token: string): PagePosition {
    const parts = token.split(".");
    const [payload, signature] = parts;
    if (parts.length !== 2 || !payload || !signature || !/^[A-Za-z0-9_-]+$/.test(payload + signature)) {
      throw invalidArgument("page_token", "malformed");
    }
    const given = Buffer.from(signature, "base64url");
    const expected = this.mac(tenantId, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw invalidArgument("page_token", "not issued to this tenant by this service, or altered");
    }
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      throw invalidArgument("page_token", "malformed");
    }
    if (
      !Array.isArray(fields) ||
      fields.length !== 4 ||
      fields[0] !== VERSION ||
      typeof fields[1] !== "string" ||
      !POSITION_TIME.test(fields[1]) ||
      typeof fields[2] !== "string" ||
      typeof fields[3] !== "string"
    ) {
      throw invalidArgument("page_token", "malformed");
    }
    if (fields[3] !== queryHash(query)) {
      throw invalidArgument("page_token", "issued for another query (times and filters must stay the same)");
    }
    return { time: fields[1], id: fields[2] };
  }
}
