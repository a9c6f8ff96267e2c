import { AuditCliError } from "../errors.ts";
import type { TokenSource } from "./token-source.ts";

/** The range and filters of a CLI query, under the API's body names. */
export interface QueryFields {
  start_time: string;
  end_time: string;
  principal_id?: string;
  action?: string;
  result?: string;
  resource_prefix?: string;
}

export interface ListPage {
  total_count: number;
  events: Record<string, unknown>[];
  next_page_token: string;
}

/** The REST surface of the audit API as the CLI uses it (list pages, the streaming export). */
export class AuditApiClient {
  private readonly base: string;

  constructor(
    endpoint: string,
    private readonly token: TokenSource,
  ) {
    this.base = endpoint.replace(/\/+$/, "");
  }

  private async post(path: string, body: unknown): Promise<Response> {
    const headers = {
      "content-type": "application/json",
      "x-tenant-id": this.token.tenantId(),
      authorization: await this.token.authorization(),
    };
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    } catch (error) {
      throw new AuditCliError("AUDIT_CLI_API_UNREACHABLE", `audit API at ${this.base}: ${String(error)}`, {
        subject: this.base,
        canRetry: true,
        cause: error,
      });
    }
    if (response.ok) return response;
    const text = await response.text().catch(() => "");
    let detail = text.slice(0, 500);
    try {
      const { error } = JSON.parse(text) as { error?: { code?: string; message?: string } };
      if (error?.code) detail = `${error.code}: ${error.message ?? ""}`;
    } catch {}
    throw new AuditCliError("AUDIT_CLI_API_FAILED", `audit API ${path} answered ${response.status}: ${detail}`, {
      subject: path,
      canRetry: response.status >= 500 || response.status === 429,
    });
  }

  /** One page of `POST /v2/audit/events` (`audit:read`). */
  async list(query: QueryFields, pageSize: number, pageToken: string): Promise<ListPage> {
    const response = await this.post("/v2/audit/events", {
      ...query,
      page_size: pageSize,
      ...(pageToken ? { page_token: pageToken } : {}),
    });
    return (await response.json()) as ListPage;
  }

  /** The JSONL body of `POST /v2/audit/events/export` (`audit:export`), as a stream. */
  async export(query: QueryFields): Promise<ReadableStream<Uint8Array>> {
    const response = await this.post("/v2/audit/events/export", { ...query, format: "EXPORT_FORMAT_JSON" });
    if (!response.body) throw new AuditCliError("AUDIT_CLI_API_FAILED", "the export answered no body");
    return response.body;
  }
}
