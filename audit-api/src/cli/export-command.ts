import { once } from "node:events";
import { createWriteStream, renameSync, unlinkSync } from "node:fs";
import type { Writable } from "node:stream";
import { Presets, SingleBar } from "cli-progress";
import type { AuditApiClient, QueryFields } from "./api-client.ts";

export interface ExportOptions {
  api: AuditApiClient;
  query: QueryFields;
  /** A file path, or undefined / "-" for stdout. */
  out: string | undefined;
  progress: boolean;
  log: (line: string) => void;
}

async function write(target: Writable, chunk: Uint8Array): Promise<void> {
  if (!target.write(chunk)) await once(target, "drain");
}

function countLines(chunk: Uint8Array): number {
  let n = 0;
  for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) n++;
  return n;
}

/**
 * `export`: the streaming export (`POST /v2/audit/events/export`, JSONL) to a file or stdout, with a progress bar
 * on stderr sized by the range's `total_count`. A file is written as `<out>.partial` and renamed when complete, so
 * an interrupted export never looks finished.
 */
export async function exportEvents(options: ExportOptions): Promise<{ events: number; bytes: number }> {
  const { api, query } = options;
  const toFile = options.out !== undefined && options.out !== "-";
  const total = options.progress ? (await api.list(query, 1, "")).total_count : 0;
  const body = await api.export(query);
  const partial = `${options.out}.partial`;
  const target: Writable = toFile ? createWriteStream(partial, { mode: 0o600 }) : process.stdout;
  const bar = options.progress
    ? new SingleBar(
        {
          stream: process.stderr,
          format: "export |{bar}| {percentage}% | {value}/{total} events | {mib} MiB",
          hideCursor: true,
        },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(total, 0, { mib: "0.0" });
  let events = 0;
  let bytes = 0;
  try {
    for await (const chunk of body) {
      await write(target, chunk);
      events += countLines(chunk);
      bytes += chunk.length;
      bar?.update(events, { mib: (bytes / 1048576).toFixed(1) });
    }
    if (toFile) {
      await new Promise<void>((resolve, reject) =>
        target.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
      renameSync(partial, options.out as string);
    }
  } catch (error) {
    if (toFile) {
      target.destroy();
      try {
        unlinkSync(partial);
      } catch {}
    }
    throw error;
  } finally {
    bar?.stop();
  }
  options.log(`exported ${events} events (${bytes} bytes)${toFile ? ` to ${options.out}` : ""}`);
  return { events, bytes };
}
