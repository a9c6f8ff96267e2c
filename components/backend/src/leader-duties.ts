import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { abortableSleep, RuntimeError } from "@svc/component-runtime";
import { dutyCounter } from "@svc/component-runtime/metrics";
import type { Logger } from "pino";
import type { ShaperLink } from "./shaper-link.ts";
import type { Task, TaskStore } from "./task-store.ts";

const tasksRecovered = dutyCounter(
  "svc_backend_tasks_recovered_total",
  "Tasks left running by an earlier term that RecoverTasks() queued again on taking office (they are replayed)",
);
const jobsReplayed = dutyCounter(
  "svc_backend_jobs_replayed_total",
  "Shaper jobs queued again after their shaper call failed (a shaper failover), to run on the serving shaper",
);
const tasksCleaned = dutyCounter(
  "svc_backend_tasks_cleaned_total",
  "Finished tasks deleted by the cleanup worker after their retention",
);

export interface LeaderDutiesOptions {
  store: TaskStore;
  shaper: ShaperLink;
  s3: S3Client;
  bucket: string;
  prefix: string;
  logger: Logger;
  pod: string;
  term: number | undefined;
  signal: AbortSignal;
  tickMs: number;
  maxRunning: number;
  taskRetentionMs: number;
  /** Called with the term once the recoveries are done, and with undefined when the leadership ends. */
  inOffice: (term: number | undefined) => void;
}

const isFenced = (error: unknown) => error instanceof RuntimeError && error.code === "COMPONENT_FENCED";
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The backend leader's duties for one term (spec: Leader-only duties): `RecoverTasks()` (tasks left running by an
 * earlier term are queued again), `RecoverVCTCaches()` (the keys of every ready index, loaded into the shaper), then
 * every tick: the shaper key check, the append queue worker and the shaper job dispatch (claimed tasks run
 * concurrently, at most `maxRunning`), index delete scheduling and the cleanup worker. A fenced write means a
 * successor is in office: the work rejects and the process steps down.
 */
export async function runLeaderDuties(options: LeaderDutiesOptions): Promise<void> {
  const { store, shaper, logger, term, signal } = options;
  if (term === undefined) throw new RuntimeError("RUNTIME_CONFIG_INVALID", "backend needs an election");
  signal.addEventListener("abort", () => options.inOffice(undefined), { once: true });
  while (!signal.aborted) {
    try {
      const requeued = await store.recoverTasks(term, options.pod);
      tasksRecovered.inc(requeued);
      const keys = await store.readyKeys();
      logger.info({ event: "recovered", term, at: Date.now(), requeued, indexes: keys.length }, "tasks recovered");
      break;
    } catch (error) {
      if (isFenced(error)) throw error;
      logger.warn({ err: messageOf(error), term }, "RecoverTasks() failed; trying again");
      await abortableSleep(options.tickMs, signal);
    }
  }
  if (signal.aborted) return;
  options.inOffice(term);
  shaper.invalidate();

  const running = new Map<string, Promise<void>>();
  let lastCleanup = 0;
  let fenced: unknown;
  const run = (task: Task) => {
    const work = runTask(options, term, task)
      .catch((error: unknown) => {
        if (isFenced(error)) fenced = error;
        else logger.warn({ err: messageOf(error), task: task.id }, "task failed; queued again");
        return store.requeue(term, task.id).then(
          () => {
            if (task.kind === "shaper_job") jobsReplayed.inc();
          },
          (requeueError: unknown) => {
            if (isFenced(requeueError)) fenced = requeueError;
          },
        );
      })
      .finally(() => running.delete(task.id));
    running.set(task.id, work);
  };

  while (!signal.aborted) {
    if (fenced) throw fenced;
    try {
      let shaperReady = true;
      await shaper.ensureKeys().catch((error: unknown) => {
        shaperReady = false;
        logger.warn({ err: messageOf(error) }, "no shaper holds the keys yet");
      });
      const claimed = await store.claim(term, options.maxRunning - running.size);
      for (const task of claimed) {
        if (task.kind === "shaper_job" && !shaperReady) await store.requeue(term, task.id);
        else run(task);
      }
      if (Date.now() - lastCleanup > options.taskRetentionMs / 10) {
        const removed = await store.cleanup(term, options.taskRetentionMs);
        tasksCleaned.inc(removed);
        lastCleanup = Date.now();
        if (removed > 0) logger.info({ event: "cleanup", removed }, "finished tasks removed");
      }
    } catch (error) {
      if (isFenced(error)) throw error;
      logger.warn({ err: messageOf(error), term }, "backend tick failed");
    }
    await abortableSleep(options.tickMs, signal);
  }
  await Promise.allSettled(running.values());
}

async function runTask(options: LeaderDutiesOptions, term: number, task: Task): Promise<void> {
  const { store, logger } = options;
  switch (task.kind) {
    case "shaper_job": {
      const result = await options.shaper.runJob(task.id, task.indexName, String(task.payload.input ?? ""));
      await store.finish(term, task.id, result);
      logger.info({ event: "task-done", at: Date.now(), task: task.id, kind: task.kind }, "job done");
      return;
    }
    case "append": {
      // The append queue worker: the appended data becomes an object of the index (the data plane is not shown).
      const key = `${options.prefix}indexes/${task.indexName}/appends/${task.id}`;
      const body = new TextEncoder().encode(String(task.payload.data ?? ""));
      await options.s3.send(
        new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: body, ChecksumAlgorithm: "SHA256" }),
      );
      await store.finish(term, task.id, key);
      return;
    }
    case "delete_index": {
      // Index delete scheduling: the index goes once no job on it is left; the orchestrator then unplaces it.
      if (!(await store.deletable(task.indexName))) throw new Error(`index ${task.indexName} still has jobs`);
      await store.markDeleted(term, task.indexName);
      await store.finish(term, task.id, null);
      options.shaper.invalidate();
      logger.info({ event: "index-deleted", index: task.indexName }, "index deleted");
      return;
    }
    case "cleanup": {
      const removed = await store.cleanup(term, options.taskRetentionMs);
      tasksCleaned.inc(removed);
      await store.finish(term, task.id, String(removed));
      return;
    }
  }
}
