import { describe, expect, test } from "bun:test";
import { waitFor } from "@svc/testkit";
import { type AgedBatches, BatchAgeTimer } from "../src/batch-age-timer.ts";

/** A partition's open batch as the timer sees it: opened at `openedAt`, sealed (with the time) by the timer. */
class FakeWriter implements AgedBatches {
  openedAt: number | undefined;
  sealedAt: number[] = [];
  sealAttempts = 0;
  canSeal = true;
  dueAt(maxAgeMs: number): number | undefined {
    return this.openedAt === undefined ? undefined : this.openedAt + maxAgeMs;
  }
  seal(): void {
    this.sealAttempts++;
    if (!this.canSeal) return;
    this.sealedAt.push(performance.now());
    this.openedAt = undefined;
  }
  /** Opens a batch whose first record came `agoMs` ago (0: now) and tells the timer. */
  open(timer: BatchAgeTimer, agoMs = 0): number {
    const openedAt = performance.now() - agoMs;
    this.openedAt = openedAt;
    timer.due(openedAt + timer.maxAgeMs);
    return openedAt;
  }
}

/** Polls `condition` every millisecond (the timer's ages are tens of ms) until it holds, for at most 5 s. */
const until = (condition: () => boolean) =>
  waitFor("the timer's seals", async () => (condition() ? true : undefined), { timeoutMs: 5_000, intervalMs: 1 });

/** Resolves after every timeout already due (a zero timeout queued after them). */
const afterDueTimeouts = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("BatchAgeTimer", () => {
  test("seals each batch once it reaches its age, never before, each partition on its own time", async () => {
    const [a, b] = [new FakeWriter(), new FakeWriter()];
    const timer = new BatchAgeTimer(40, () => [a, b]);
    const openedA = a.open(timer, 15);
    const openedB = b.open(timer);
    await until(() => a.sealedAt.length === 1 && b.sealedAt.length === 1);
    expect((a.sealedAt[0] as number) - openedA).toBeGreaterThanOrEqual(40);
    expect((b.sealedAt[0] as number) - openedB).toBeGreaterThanOrEqual(40);
    // b was due later than a: it was sealed by a timeout of its own, not with a.
    expect(b.sealedAt[0] as number).toBeGreaterThan(a.sealedAt[0] as number);
    // A batch opened after its partition's seal gets its own due time.
    const reopened = a.open(timer);
    await until(() => a.sealedAt.length === 2);
    expect((a.sealedAt[1] as number) - reopened).toBeGreaterThanOrEqual(40);
    timer.stop();
  });

  test("an earlier batch moves the timeout forward; stop leaves open batches to the caller", async () => {
    const [late, early] = [new FakeWriter(), new FakeWriter()];
    const timer = new BatchAgeTimer(5_000, () => [late, early]);
    late.open(timer);
    // Opened after `late` but with a first record 4.99 s old: due in ~10 ms, long before `late`.
    early.open(timer, 4_990);
    await until(() => early.sealedAt.length === 1);
    expect(late.sealedAt).toEqual([]);
    // After stop nothing is sealed any more, not even a batch already due.
    timer.stop();
    early.open(timer, 10_000);
    await afterDueTimeouts();
    expect(early.sealedAt.length).toBe(1);
    expect(late.sealedAt).toEqual([]);
  });

  test("a writer that cannot seal is not waited for in a loop", async () => {
    const stuck = new FakeWriter();
    stuck.canSeal = false;
    const ok = new FakeWriter();
    const timer = new BatchAgeTimer(20, () => [stuck, ok]);
    stuck.open(timer);
    ok.open(timer);
    await until(() => ok.sealedAt.length === 1);
    const attemptsBefore = stuck.sealAttempts;
    const reopened = ok.open(timer);
    await until(() => ok.sealedAt.length === 2);
    expect((ok.sealedAt[1] as number) - reopened).toBeGreaterThanOrEqual(20);
    // One attempt per firing, not a busy loop on the stuck batch.
    expect(stuck.sealAttempts - attemptsBefore).toBeLessThanOrEqual(2);
    timer.stop();
  });
});
