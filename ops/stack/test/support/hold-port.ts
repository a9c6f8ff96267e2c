import { connect } from "node:net";
import { join } from "node:path";
import { waitFor } from "@svc/common";

export const LISTENER_SCRIPT = join(import.meta.dir, "listener.ts");

export interface HeldPort {
  port: number;
  /** The pid of the process that listens. */
  pid: number;
  release(): Promise<void>;
}

/** A port held by a real listener in a child process (not this test process), on `host` ("::" for IPv6). */
export async function holdPort(host = "127.0.0.1", port = 0): Promise<HeldPort> {
  const child = Bun.spawn([process.execPath, LISTENER_SCRIPT, host, String(port)], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = child.stdout.getReader();
  let text = "";
  const line = await waitFor(
    "the listener's port",
    async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`listener exited (${await child.exited})`);
      text += new TextDecoder().decode(value);
      return text.includes("\n") ? text.trim() : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 1 },
  );
  reader.releaseLock();
  return {
    port: Number(line),
    pid: child.pid,
    release: async () => {
      child.kill("SIGKILL");
      await child.exited;
    },
  };
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` (the probe of the tests' fake services). */
export function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
