import { join } from "node:path";
import type { Subprocess } from "bun";

const main = join(import.meta.dir, "../../src/main.ts");

export interface AgentProcess {
  process: Subprocess<"pipe", "pipe", "pipe">;
  /** The JSON log lines printed so far. */
  logs: Record<string, unknown>[];
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** `/metrics` base URL, once the agent logged "agent started". */
  metricsUrl(): Promise<string>;
  exited: Promise<number>;
}

/** Spawns `bun run agent/src/main.ts` with exactly `env` (plus PATH and HOME). */
export function spawnAgent(env: Record<string, string>): AgentProcess {
  const child = Bun.spawn([process.execPath, "run", main], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const logs: Record<string, unknown>[] = [];
  let err = "";
  let started: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => {
    started = resolve;
  });
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (text: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) sink(decoder.decode(chunk, { stream: true }));
  };
  let pending = "";
  const stdoutDone = pump(child.stdout, (text) => {
    pending += text;
    const rows = pending.split("\n");
    pending = rows.pop() ?? "";
    for (const row of rows) {
      if (row.trim() === "") continue;
      const entry = JSON.parse(row) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === "agent started" && typeof entry.metrics === "string") started(entry.metrics);
    }
  });
  const stderrDone = pump(child.stderr, (text) => {
    err += text;
  });
  const exited = (async () => {
    const code = await child.exited;
    await Promise.allSettled([stdoutDone, stderrDone]);
    return code;
  })();
  return {
    process: child,
    logs,
    stderr: () => err,
    metricsUrl: () =>
      Promise.race([
        url,
        exited.then((code) => {
          throw new Error(`agent exited (${code}) before it started: ${err}`);
        }),
      ]),
    exited,
  };
}
