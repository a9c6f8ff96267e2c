import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isAlive } from "@svc/common";
import { QueueConsumerError } from "./errors.ts";
import { SpoolBody } from "./spool-body.ts";

const PREFIX = "svc-audit-spool-";
/** `svc-audit-spool-<host>-<pid>-<start ms>-<6 random characters>` (`mkdtemp`'s suffix has no dash). */
const NAME = /^svc-audit-spool-(.+)-(\d+)-(\d+)-[A-Za-z0-9]{6}$/;
/** This host's name as it goes into a directory name: a pid is only checked on the host it belongs to. */
const HOST = hostname().replace(/[^A-Za-z0-9.-]/g, "_") || "localhost";
/** This process's start (ms), in its spool directory's name: a later process with the same pid (a container's 1) differs. */
const STARTED = Math.round(performance.timeOrigin);

/**
 * One writer's spool directory (docs/audit-storage.md, "Spool"): `svc-audit-spool-<host>-<pid>-<start ms>-<random>`
 * under `SVC_AUDIT_SPOOL_DIR`, one file per batch, removed when the writer stops. Directories that writers on this
 * host left when they died (their process is gone, or it is this process's pid with another start: a restarted
 * container) are removed when a writer opens its own; another host's are kept (its pids cannot be checked here). A
 * spool holds only uncommitted batches, which Kafka still has.
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
        if (!match || match[1] !== HOST) continue;
        const pid = Number(match[2]);
        const stale = pid === process.pid ? Number(match[3]) !== STARTED : !isAlive(pid);
        if (stale) rmSync(join(root, name), { recursive: true, force: true });
      }
      return new BatchSpool(mkdtempSync(join(root, `${PREFIX}${HOST}-${process.pid}-${STARTED}-`)));
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

  /** Removes the directory and every file left in it; a failure is not the writer's (nothing in it is committed). */
  close(): void {
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // Left for the next writer that opens a spool here once this process is gone.
    }
  }
}
