import type { AuditApiClient, QueryFields } from "./api-client.ts";

export interface ListOptions {
  api: AuditApiClient;
  query: QueryFields;
  pageSize: number;
  /** Stop after this many events (undefined: all of them). */
  maxItems: number | undefined;
  startingToken: string;
}

export interface ListOutput {
  total_count: number;
  events: Record<string, unknown>[];
  /** Give it to `--starting-token` (same range and filters) for the events after these; absent at the end. */
  next_token?: string;
}

/** `list`: pages of `POST /v2/audit/events` until `maxItems` events or the end, as one answer. */
export async function listEvents(options: ListOptions): Promise<ListOutput> {
  const { api, query, pageSize, maxItems } = options;
  const events: Record<string, unknown>[] = [];
  let token = options.startingToken;
  let total = 0;
  for (;;) {
    const want = maxItems === undefined ? pageSize : Math.min(pageSize, maxItems - events.length);
    const page = await api.list(query, want, token);
    total = page.total_count;
    events.push(...page.events);
    token = page.next_page_token;
    if (!token || (maxItems !== undefined && events.length >= maxItems)) break;
  }
  return { total_count: total, events, ...(token ? { next_token: token } : {}) };
}
