import { invalidArgument } from "./errors.ts";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const pad = (value: number, width = 2) => String(value).padStart(width, "0");

/**
 * An RFC 3339 date-time (section 5.6: full-date "T" full-time, `Z` or a numeric offset) normalised to UTC:
 * `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, the fraction kept digit for digit. Refuses anything else, an impossible
 * calendar date, and a leap second (the index cannot hold one). Throws `AUDIT_API_INVALID_ARGUMENT` naming `field`.
 */
export function normaliseRfc3339(field: string, value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw invalidArgument(field, "required, an RFC 3339 timestamp such as 2024-05-01T00:00:00Z");
  }
  const match = RFC3339.exec(value);
  if (!match) {
    throw invalidArgument(
      field,
      `${JSON.stringify(value.slice(0, 64))} is not an RFC 3339 timestamp (2024-05-01T00:00:00Z)`,
    );
  }
  const [, y, mo, d, h, mi, s, fraction = "", zulu, sign, oh, om] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const local = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  local.setUTCFullYear(year); // years below 100 are not shifted into the 1900s
  if (
    local.getUTCFullYear() !== year ||
    local.getUTCMonth() !== month - 1 ||
    local.getUTCDate() !== day ||
    local.getUTCHours() !== hour ||
    local.getUTCMinutes() !== minute ||
    local.getUTCSeconds() !== second
  ) {
    throw invalidArgument(field, `${JSON.stringify(value)} is not a valid date and time`);
  }
  const offsetHours = zulu ? 0 : Number(oh);
  const offsetMinutes = zulu ? 0 : Number(om);
  if (offsetHours > 23 || offsetMinutes > 59) throw invalidArgument(field, `${JSON.stringify(value)}: bad offset`);
  const offsetMs = (sign === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const utc = new Date(local.getTime() - offsetMs);
  const utcYear = utc.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) throw invalidArgument(field, `${JSON.stringify(value)} is out of range`);
  return (
    `${pad(utcYear, 4)}-${pad(utc.getUTCMonth() + 1)}-${pad(utc.getUTCDate())}` +
    `T${pad(utc.getUTCHours())}:${pad(utc.getUTCMinutes())}:${pad(utc.getUTCSeconds())}${fraction}Z`
  );
}

/** Compares two normalised timestamps (same shape, so the fraction compares as digits). */
export function compareUtc(a: string, b: string): number {
  const split = (t: string) => {
    const dot = t.indexOf(".");
    const whole = dot === -1 ? t.slice(0, -1) : t.slice(0, dot);
    const fraction = dot === -1 ? "" : t.slice(dot + 1, -1);
    return [whole, fraction.padEnd(9, "0")] as const;
  };
  const [wa, fa] = split(a);
  const [wb, fb] = split(b);
  if (wa !== wb) return wa < wb ? -1 : 1;
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}
