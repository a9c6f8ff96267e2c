import { status } from "@grpc/grpc-js";
import { grpcRefusal, type TermFence, tableOf } from "@svc/component-runtime";
import { dutyCounter } from "@svc/component-runtime/metrics";
import type { SQL, TransactionSQL } from "bun";
import type { KeyRing } from "./key-ring.ts";

const jobsFinished = dutyCounter(
  "svc_shaper_jobs_finished_total",
  "Jobs answered with their result: outcome ran (recorded now) or replayed (already recorded, answered again)",
  ["outcome"],
);
for (const outcome of ["ran", "replayed"]) jobsFinished.inc({ outcome }, 0);

export interface JobOutcome {
  result: string;
  /** False when the job had been recorded already (a replay after a failover). */
  ran: boolean;
}

/**
 * Runs shaper jobs (docs/components.md): a job needs its index's key; its result is recorded once in
 * `job_results` (`INSERT … ON CONFLICT DO NOTHING`, keyed by the backend's task id), so a job replayed after a
 * failover answers the recorded result instead of applying twice. Under an election the insert is fenced by the
 * leader's term: a deposed shaper cannot record a result.
 */
export class JobRunner {
  private readonly results: string;

  constructor(
    private readonly sql: SQL,
    schema: string,
    private readonly keys: KeyRing,
    private readonly fence: TermFence,
    private readonly workMs: number,
  ) {
    this.results = tableOf(schema, "job_results");
  }

  async run(
    taskId: string,
    indexName: string,
    input: string,
    pod: string,
    term: number | undefined,
  ): Promise<JobOutcome> {
    const outcome = await this.runOnce(taskId, indexName, input, pod, term);
    jobsFinished.inc({ outcome: outcome.ran ? "ran" : "replayed" });
    return outcome;
  }

  private async runOnce(
    taskId: string,
    indexName: string,
    input: string,
    pod: string,
    term: number | undefined,
  ): Promise<JobOutcome> {
    const key = this.keys.get(indexName);
    if (!key) throw grpcRefusal(status.FAILED_PRECONDITION, `key of index ${indexName} is not loaded`);
    const recorded = await this.recorded(this.sql, taskId);
    if (recorded !== undefined) return { result: recorded, ran: false };
    if (this.workMs > 0) await Bun.sleep(this.workMs);
    const result = new Bun.CryptoHasher("sha256").update(`${key.material}:${input}`).digest("hex");
    const record = async (tx: TransactionSQL | SQL) => {
      const rows = await tx.unsafe(
        `INSERT INTO ${this.results} (task_id, shaper_pod, result) VALUES ($1, $2, $3)
         ON CONFLICT (task_id) DO NOTHING RETURNING task_id`,
        [taskId, pod, result],
      );
      if (rows.length > 0) return { result, ran: true };
      return { result: (await this.recorded(tx, taskId)) ?? result, ran: false };
    };
    return term === undefined ? record(this.sql) : this.fence.write(term, record);
  }

  private async recorded(tx: TransactionSQL | SQL, taskId: string): Promise<string | undefined> {
    const rows: { result: string }[] = await tx.unsafe(`SELECT result FROM ${this.results} WHERE task_id = $1`, [
      taskId,
    ]);
    return rows[0]?.result;
  }
}
