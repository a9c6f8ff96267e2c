import { hostname } from "node:os";
import { AuditCliError } from "../errors.ts";
import { DELIVERY_TIMEOUT_MS, type SiemSink } from "./siem-sink.ts";

/** `time` of an HEC event: epoch seconds with milliseconds; absent when the record's time does not parse. */
function epochSeconds(time: unknown): number | undefined {
  const ms = typeof time === "string" ? Date.parse(time) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/**
 * JSONL over HTTP in the form of Splunk's HTTP Event Collector (`POST /services/collector/event`): one request per
 * batch, one line per record `{"time", "host", "source", "sourcetype", "event": <the record>}`, the token in
 * `Authorization: Splunk <token>`. A 2xx answer is the acknowledgement; 408, 429, 5xx, a broken connection or no
 * answer within 30 s are retried; any other status refuses the batch for good.
 */
export class HecSink implements SiemSink {
  readonly target: string;
  private readonly host = hostname();

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly sourcetype: string,
  ) {
    this.target = url;
  }

  async deliver(records: readonly Record<string, unknown>[]): Promise<void> {
    let body = "";
    for (const record of records) {
      const time = epochSeconds(record.time);
      body += `${JSON.stringify({ ...(time === undefined ? {} : { time }), host: this.host, source: "svc-audit", sourcetype: this.sourcetype, event: record })}\n`;
    }
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: "POST",
        headers: { authorization: `Splunk ${this.token}`, "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
    } catch (error) {
      throw new AuditCliError("AUDIT_CLI_SIEM_UNAVAILABLE", `${this.url}: ${String(error)}`, {
        subject: this.url,
        canRetry: true,
        cause: error,
      });
    }
    const text = await response.text().catch(() => "");
    if (response.ok) return;
    const retriable = response.status === 408 || response.status === 429 || response.status >= 500;
    throw new AuditCliError(
      retriable ? "AUDIT_CLI_SIEM_UNAVAILABLE" : "AUDIT_CLI_SIEM_REFUSED",
      `${this.url} answered ${response.status}: ${text.slice(0, 300)}`,
      { subject: this.url, canRetry: retriable },
    );
  }
}
