/**
 * Who is calling, as established by a verified access token (or the explicit anonymous caller when auth is off).
 * Immutable: every caller the module hands out is deep-frozen (arrays and the expiry date included), because the
 * verified-token cache hands the same object to every request of the token. Editing it throws a `TypeError`.
 */
export interface Caller {
  /** `"token"`: from a verified access token; `"anonymous"`: auth disabled (`SVC_AUTH_DISABLED=true`). */
  readonly kind: "token" | "anonymous";
  readonly principalId: string;
  readonly tenantId: string;
  /** `realm_access.roles` of the token. */
  readonly roles: readonly string[];
  /** The `scope` claim split on whitespace. */
  readonly scopes: readonly string[];
  /** `sub` claim, when the token has one. */
  readonly subject: string | undefined;
  /** `exp` of the token; `null` for the anonymous caller. Its setters throw (see `immutableDate`). */
  readonly tokenExpiresAt: Date | null;
}

export const ANONYMOUS_PRINCIPAL_ID = "anonymous";

/** `Date.prototype` with every `set*` method replaced by one that throws: `Object.freeze` alone does not stop them. */
const IMMUTABLE_DATE_PROTOTYPE: object = Object.freeze(
  Object.create(
    Date.prototype,
    Object.fromEntries(
      Object.getOwnPropertyNames(Date.prototype)
        .filter((name) => name.startsWith("set"))
        .map((name) => [
          name,
          {
            value: (): never => {
              throw new TypeError(`Caller.tokenExpiresAt is read-only (${name})`);
            },
          },
        ]),
    ),
  ),
);

/** A `Date` (still `instanceof Date`, all getters work) whose setters throw and that takes no new properties. */
function immutableDate(epochMs: number): Date {
  const date = new Date(epochMs);
  Object.setPrototypeOf(date, IMMUTABLE_DATE_PROTOTYPE);
  return Object.freeze(date);
}

/** A deep-frozen copy of `fields`: the only way callers are made, so no mutable one ever leaves the module. */
export function freezeCaller(fields: Caller): Caller {
  return Object.freeze({
    kind: fields.kind,
    principalId: fields.principalId,
    tenantId: fields.tenantId,
    roles: Object.freeze([...fields.roles]),
    scopes: Object.freeze([...fields.scopes]),
    subject: fields.subject,
    tokenExpiresAt: fields.tokenExpiresAt === null ? null : immutableDate(fields.tokenExpiresAt.getTime()),
  });
}

/** The caller used when auth is disabled: no roles, tenant taken from `x-tenant-id`. */
export function anonymousCaller(tenantId: string): Caller {
  return freezeCaller({
    kind: "anonymous",
    principalId: ANONYMOUS_PRINCIPAL_ID,
    tenantId,
    roles: [],
    scopes: [],
    subject: undefined,
    tokenExpiresAt: null,
  });
}
