import { AuditCliError } from "../errors.ts";
import { compareUtc } from "../rfc3339.ts";
import type { AuditApiClient, QueryFields } from "./api-client.ts";
import { type Checkpoint, type CheckpointFilters, readCheckpoint, writeCheckpoint } from "./checkpoint.ts";
import type { SiemSink } from "./siem-sink.ts";

export interface ForwardOptions {
  api: AuditApiClient;
  sink: SiemSink;
  checkpointPath: string;
  /** Where a new checkpoint starts (normalised UTC). */
  startTime: string;
  /** A fixed end (normalised UTC): stop there. Undefined: follow, sending each window up to now − settle. */
  until: string | undefined;
  filters: CheckpointFilters;
  batchSize: number;
  /** Follow mode: the window's end trails the clock by this much, so records still on their way are not passed. */
  settleMs: number;
  /** Follow mode: wait this long when there is no new window yet. */
  pollMs: number;
  maxBackoffMs: number;
  log: (line: string) => void;
  /** Tests and signals: stop after the current step. */
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Runs `step` until it succeeds; an error that `canRetry` is logged and retried with capped exponential backoff. */
async function retrying<T>(what: string, step: () => Promise<T>, options: ForwardOptions): Promise<T> {
  let delay = 250;
  for (;;) {
    try {
      return await step();
    } catch (error) {
      const retry = error instanceof AuditCliError && error.canRetry;
      if (!retry || options.signal?.aborted) throw error;
      options.log(`${what} failed [${error.code}] ${error.message}; retrying in ${delay} ms`);
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, options.maxBackoffMs);
    }
  }
}

function sameFilters(a: CheckpointFilters, b: CheckpointFilters): boolean {
  const keys = ["principal_id", "action", "result", "resource_prefix"] as const;
  return keys.every((key) => a[key] === b[key]);
}

/** The checkpoint to go on from: the file's (when it belongs to this forward) or a new one at `startTime`. */
function startingPoint(options: ForwardOptions): Checkpoint {
  const { checkpointPath, sink, filters, until, startTime } = options;
  const found = readCheckpoint(checkpointPath);
  if (!found) {
    return {
      version: 1,
      target: sink.target,
      filters,
      until: until ?? null,
      window: { start_time: startTime, end_time: until ?? startTime },
      page_token: "",
      forwarded: 0,
    };
  }
  const mismatch =
    found.target !== sink.target
      ? `target ${found.target}`
      : !sameFilters(found.filters, filters)
        ? `filters ${JSON.stringify(found.filters)}`
        : found.until !== (until ?? null)
          ? `end time ${found.until ?? "(follow)"}`
          : undefined;
  if (mismatch) {
    throw new AuditCliError(
      "AUDIT_CLI_CHECKPOINT_INVALID",
      `checkpoint ${checkpointPath} belongs to another forward (${mismatch}); use another --checkpoint file`,
      { subject: checkpointPath },
    );
  }
  return found;
}

/**
 * `forward`: pages of the API's stable `(time, id)` order, one page = one batch to the SIEM; the checkpoint (window
 * + the next page's token) is written only after the SIEM acknowledged the page, so a crash or an outage resumes at
 * the first page not acknowledged: nothing lost, and nothing acknowledged sent again. Page tokens are signed by the
 * API's shared key, so a resume works on any replica and after restarts.
 *
 * Repeats: a kill in the moment between the SIEM's acknowledgement and the checkpoint's rename sends that one batch
 * again (no SIEM protocol here lets the CLI ask what arrived); every record carries its `id` for the SIEM to drop it.
 */
export async function forward(options: ForwardOptions): Promise<Checkpoint> {
  const { api, sink, checkpointPath, filters, batchSize, log } = options;
  let checkpoint = startingPoint(options);
  log(
    `forwarding to ${sink.target} from ${checkpoint.window.start_time}` +
      `${checkpoint.page_token ? " (resuming inside a window)" : ""}, ${checkpoint.forwarded} sent before`,
  );
  while (!options.signal?.aborted) {
    const { window } = checkpoint;
    if (compareUtc(window.start_time, window.end_time) >= 0) {
      if (checkpoint.until !== null && compareUtc(window.end_time, checkpoint.until) >= 0) return checkpoint;
      const end = new Date(Date.now() - options.settleMs).toISOString();
      if (compareUtc(end, window.end_time) <= 0) {
        await sleep(options.pollMs, options.signal);
        continue;
      }
      checkpoint = { ...checkpoint, window: { start_time: window.end_time, end_time: end }, page_token: "" };
      continue;
    }
    const query: QueryFields = { ...filters, ...window };
    const token = checkpoint.page_token;
    const page = await retrying("list", () => api.list(query, batchSize, token), options);
    if (page.events.length > 0) await retrying("delivery", () => sink.deliver(page.events), options);
    const forwarded = checkpoint.forwarded + page.events.length;
    checkpoint = page.next_page_token
      ? { ...checkpoint, page_token: page.next_page_token, forwarded }
      : {
          ...checkpoint,
          window: { start_time: window.end_time, end_time: window.end_time },
          page_token: "",
          forwarded,
        };
    writeCheckpoint(checkpointPath, checkpoint);
    if (page.events.length > 0) {
      const last = page.events.at(-1) as { time?: unknown };
      log(`sent ${page.events.length} (total ${forwarded}) through ${String(last.time)}`);
    }
  }
  return checkpoint;
}
