import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { QueueConsumerError } from "./errors.ts";
import { SpoolBody } from "./spool-body.ts";

const PREFIX = "svc-audit-spool-";
const NAME = /^svc-audit-spool-(\d+)-(\d+)-/;
/** This process's start (ms), in its spool directory's name: a later process with the same pid (a container's 1) differs. */
const STARTED = Math.round(performance.timeOrigin);

/** Whether a process `pid` exists (EPERM: it does, someone else's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * One writer's spool directory (docs/audit-storage.md, "Spool"): `svc-audit-spool-<pid>-<start ms>-<random>` under
 * `SVC_AUDIT_SPOOL_DIR`, one file per batch, removed when the writer stops. Directories left by writers that died
 * (their process is gone, or it is this process's pid with another start: a restarted container) are removed when
 * a writer opens its own; a spool holds only uncommitted batches, which Kafka still has.
 */
export class BatchSpool {
  private files = 0;

  private constructor(readonly dir: string) {}

  /** Creates the directory (and `root` when missing); throws `QUEUE_CONSUMER_SPOOL_FAILED`. */
  static open(root: string): BatchSpool {
    try {
      mkdirSync(root, { recursive: true });
      for (const name of readdirSync(root)) {
        const match = NAME.exec(name);
        if (!match) continue;
        const pid = Number(match[1]);
        const stale = pid === process.pid ? Number(match[2]) !== STARTED : !alive(pid);
        if (stale) rmSync(join(root, name), { recursive: true, force: true });
      }
      return new BatchSpool(mkdtempSync(join(root, `${PREFIX}${process.pid}-${STARTED}-`)));
    } catch (error) {
      throw new QueueConsumerError(
        "QUEUE_CONSUMER_SPOOL_FAILED",
        `spool directory under ${root}: ${(error as Error).message}`,
        { subject: root, cause: error },
      );
    }
  }

  /** A body for the next batch (its file is created at its first line). */
  newBody(): SpoolBody {
    this.files += 1;
    return new SpoolBody(join(this.dir, `${this.files}.jsonl`));
  }

  /** Removes the directory and every file left in it. */
  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
