import type { AuditRecord } from "@svc/audit-record";
import { type AgentConfig, parseAgentConfig } from "../../index.ts";

/** A valid audit record with a padded attribute, so its line is about `bytes` long (400 as in the bench). */
export function auditRecord(id: string, options: { tenant?: string; time?: Date; bytes?: number } = {}): AuditRecord {
  const record: AuditRecord = {
    id,
    time: (options.time ?? new Date()).toISOString(),
    source: "endpoint",
    action: "/endpoint.v1.EndpointService/Describe",
    resource: "endpoints/e-1",
    result: "ok",
    duration_ms: 3,
    claimed_tenant_id: options.tenant ?? "tenant-a",
    principal_id: "user-1",
    tenant_id: options.tenant ?? "tenant-a",
  };
  const size = Buffer.byteLength(JSON.stringify(record)) + 20;
  const pad = Math.max(0, (options.bytes ?? 400) - size);
  record.attributes = { note: "x".repeat(pad) };
  return record;
}

export const line = (record: AuditRecord) => `${JSON.stringify(record)}\n`;

/** `count` lines with ids `<prefix>-<n>` for n in [from, from + count). */
export function lines(prefix: string, from: number, count: number, tenant?: string): string {
  let text = "";
  for (let n = from; n < from + count; n += 1) text += line(auditRecord(`${prefix}-${n}`, { tenant }));
  return text;
}

/** The agent's settings for a test: fast polls and linger, metrics on an ephemeral port, silent logs. */
export function testConfig(env: Record<string, string>): AgentConfig {
  return parseAgentConfig({
    SVC_AGENT_LINGER_MS: "5",
    SVC_AGENT_POLL_MS: "20",
    SVC_AGENT_ROTATE_GRACE_MS: "200",
    SVC_AGENT_METRICS_PORT: "0",
    SVC_AGENT_LOG_LEVEL: "silent",
    ...env,
  });
}

/** The value of one sample of the agent's `/metrics` (`name` or `name{label="v"}`), 0 when absent. */
export async function scrape(metricsUrl: string | undefined, sample: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  for (const row of text.split("\n")) {
    if (row.startsWith(`${sample} `)) return Number(row.slice(sample.length + 1));
  }
  return 0;
}

/** A pino destination that keeps every log line, parsed. */
export function captureLogs(): { lines: Record<string, unknown>[]; write(text: string): void } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    write(text: string) {
      for (const row of text.split("\n")) if (row.trim() !== "") lines.push(JSON.parse(row));
    },
  };
}
