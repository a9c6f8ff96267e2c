import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { RuntimeError } from "./errors.ts";

export const configInvalid = (variable: string, message: string) =>
  new RuntimeError("RUNTIME_CONFIG_INVALID", `${variable}: ${message}`, { subject: variable });

/**
 * Reads the keys of `schema` (and only those) from `env`, turns integer and number fields from decimal text into
 * numbers, fills defaults and validates; the first bad value throws `RUNTIME_CONFIG_INVALID` naming its variable. An
 * empty value counts as unset, except for the keys in `emptyMeaningful` (`SVC_ELECTION_BACKEND=""` means "no HA").
 * A value whose variable ends in `_KEY`, `_SECRET` or `_PASSWORD` is never printed.
 */
export function parseEnv<S extends TObject>(
  schema: S,
  env: Record<string, string | undefined>,
  emptyMeaningful: readonly string[] = [],
): Static<S> {
  const picked: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema.properties) as [string, TSchema][]) {
    const raw = env[key];
    if (raw === undefined || (raw === "" && !emptyMeaningful.includes(key))) continue;
    if (field.type === "integer" || field.type === "number") {
      const value = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(value)) {
        throw configInvalid(key, `expected a number (got ${JSON.stringify(raw)})`);
      }
      picked[key] = value;
    } else picked[key] = raw;
  }
  const withDefaults = Value.Default(schema, picked);
  const first = Value.Errors(schema, withDefaults).First();
  if (first) {
    const variable = first.path.replace(/^\//, "").split("/")[0] || "environment";
    const secret = /(_KEY|_SECRET|_PASSWORD)$/.test(variable);
    throw configInvalid(variable, `${first.message}${secret ? "" : ` (got ${JSON.stringify(first.value)})`}`);
  }
  return withDefaults as Static<S>;
}
