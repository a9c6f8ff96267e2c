import { normaliseRfc3339 } from "../rfc3339.ts";

/** RFC 5424 facility 13, "log audit". */
const FACILITY = 13;
/** Severity 6 (informational) for a call that succeeded, 5 (notice) for every other result. */
const severityOf = (result: unknown) => (result === "OK" ? 6 : 5);
/** SD-ID `audit@32473`: 32473 is the enterprise number RFC 5612 reserves for examples and documentation. */
export const SD_ID = "audit@32473";

/** PRINTUSASCII without spaces, cut to `max` (RFC 5424 header fields); "-" (NILVALUE) when empty. */
function headerField(value: string, max: number): string {
  const cleaned = value.replace(/[^\x21-\x7e]/g, "").slice(0, max);
  return cleaned === "" ? "-" : cleaned;
}

/** PARAM-VALUE: `"`, `\` and `]` escaped with a backslash (RFC 5424 §6.3.3). */
const paramValue = (value: unknown) => String(value ?? "").replace(/["\\\]]/g, (c) => `\\${c}`);

/** The record's time as an RFC 5424 TIMESTAMP (UTC, at most 6 fraction digits), or "-" when it does not parse. */
export function syslogTimestamp(time: unknown): string {
  try {
    const utc = normaliseRfc3339("time", time);
    return utc.replace(/\.(\d{6})\d+Z$/, ".$1Z");
  } catch {
    return "-";
  }
}

/**
 * One record as an RFC 5424 message: `<PRI>1 TIMESTAMP HOSTNAME svc-audit - audit [audit@32473 id tenant action
 * result] <the record as JSON>`. The event id in the structured data is the receiver's key for telling a repeated
 * delivery apart.
 */
export function formatSyslog(record: Record<string, unknown>, host: string): string {
  const pri = FACILITY * 8 + severityOf(record.result);
  const sd =
    `[${SD_ID} id="${paramValue(record.id)}" tenant="${paramValue(record.tenant_id)}"` +
    ` action="${paramValue(record.action)}" result="${paramValue(record.result)}"]`;
  return `<${pri}>1 ${syslogTimestamp(record.time)} ${headerField(host, 255)} svc-audit - audit ${sd} ${JSON.stringify(record)}`;
}

/** RFC 6587 octet-counting frame: `<bytes> <message>`. */
export function frame(message: string): Buffer {
  const bytes = Buffer.from(message, "utf8");
  return Buffer.concat([Buffer.from(`${bytes.length} `), bytes]);
}
