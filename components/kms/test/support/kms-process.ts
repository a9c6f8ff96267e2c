import { join } from "node:path";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/** A KMS started as its own process (src/main.ts), its "kms started" fields and everything it logged so far. */
export interface KmsProcess {
  child: ReturnType<typeof Bun.spawn>;
  grpcPort: number;
  httpPort: number;
  workerPids: number[];
  /** The log lines (stderr) read so far; keeps filling until the process exits. */
  log: () => string;
  stop: () => Promise<number>;
}

/** Spawns the KMS with `env` and waits for its "kms started" line (rejects with its log when it exits first). */
export async function spawnKms(env: Record<string, string>): Promise<KmsProcess> {
  const child = Bun.spawn([process.execPath, MAIN], { env, stdout: "ignore", stderr: "pipe" });
  const reader = (child.stderr as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const ended = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
    }
  })();
  for (;;) {
    const line = buffered.split("\n").find((candidate) => candidate.includes('"msg":"kms started"'));
    if (line) {
      const fields = JSON.parse(line) as { grpcPort: number; httpPort: number; workerPids?: number[] };
      return {
        child,
        grpcPort: fields.grpcPort,
        httpPort: fields.httpPort,
        workerPids: fields.workerPids ?? [],
        log: () => buffered,
        stop: async () => {
          child.kill("SIGTERM");
          const code = await child.exited;
          await ended;
          return code;
        },
      };
    }
    const exited = await Promise.race([child.exited, Bun.sleep(50).then(() => undefined)]);
    if (exited !== undefined) {
      await ended;
      throw new Error(`the KMS exited ${exited} before it served:\n${buffered}`);
    }
  }
}

/** Socket inodes a process holds (its /proc/<pid>/fd links to `socket:[inode]`). */
async function socketInodes(pid: number): Promise<Set<string>> {
  const { readdir, readlink } = await import("node:fs/promises");
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match?.[1]) inodes.add(match[1]);
  }
  return inodes;
}

/**
 * How many established TCP connections on local port `port` each process holds (from /proc/net/tcp{,6} and its
 * fds): which worker accepted which client connection.
 */
export async function connectionsOn(port: number, pids: number[]): Promise<Map<number, number>> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const established = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await Bun.file(table)
      .text()
      .catch(() => "");
    for (const row of text.split("\n").slice(1)) {
      const columns = row.trim().split(/\s+/);
      if (columns[1]?.endsWith(`:${hexPort}`) && columns[3] === "01" && columns[9]) established.add(columns[9]);
    }
  }
  const counts = new Map<number, number>();
  for (const pid of pids) {
    let count = 0;
    for (const inode of await socketInodes(pid)) if (established.has(inode)) count += 1;
    counts.set(pid, count);
  }
  return counts;
}
