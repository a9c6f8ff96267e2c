import { type Static, Type } from "@sinclair/typebox";

/** What `issue` and `refresh` return, and what a token file holds. Times are seconds since the epoch. */
export const TokenSetSchema = Type.Object({
  access_token: Type.String({ minLength: 1 }),
  refresh_token: Type.Optional(Type.String({ minLength: 1 })),
  expires_at: Type.Integer(),
  refresh_expires_at: Type.Optional(Type.Integer()),
  scope: Type.Optional(Type.String()),
});

export type TokenSet = Static<typeof TokenSetSchema>;

/** The claims of a JWT, unverified: enough to read roles and user name; the services verify signatures. */
export function decodeClaims(jwt: string): Record<string, unknown> {
  const part = jwt.split(".")[1];
  if (part === undefined) return {};
  try {
    const claims: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return typeof claims === "object" && claims !== null ? (claims as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
