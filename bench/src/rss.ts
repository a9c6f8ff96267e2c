import { readFileSync } from "node:fs";

/** VmHWM (peak resident set) and VmRSS of a live process, in bytes; undefined once it is gone. */
export function readRss(pid: number): { peak: number; current: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const kib = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  };
  return { peak: kib("VmHWM"), current: kib("VmRSS") };
}

/**
 * Samples a process's memory every `intervalMs` until stopped: the kernel's own peak (VmHWM) when it can still be
 * read, else the largest VmRSS seen (a process that already exited keeps its last reading).
 */
export class RssSampler {
  private peakBytes = 0;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly pid: number,
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample(): void {
    const rss = readRss(this.pid);
    if (rss) this.peakBytes = Math.max(this.peakBytes, rss.peak, rss.current);
  }

  /** Takes a last sample and stops; the peak in bytes. */
  stop(): number {
    this.sample();
    clearInterval(this.timer);
    return this.peakBytes;
  }

  get peak(): number {
    return this.peakBytes;
  }
}
