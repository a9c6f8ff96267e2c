import { describe, expect, test } from "bun:test";
import { type AgedBatches, BatchAgeTimer } from "../src/batch-age-timer.ts";

/** A partition's open batch as the timer sees it: opened at `openedAt`, sealed (with the time) by the timer. */
class FakeWriter implements AgedBatches {
  openedAt: number | undefined;
  sealedAt: number[] = [];
  canSeal = true;
  dueAt(maxAgeMs: number): number | undefined {
    return this.openedAt === undefined ? undefined : this.openedAt + maxAgeMs;
  }
  isDue(maxAgeMs: number, now: number): boolean {
    return this.openedAt !== undefined && now - this.openedAt >= maxAgeMs;
  }
  seal(): void {
    if (!this.canSeal) return;
    this.sealedAt.push(performance.now());
    this.openedAt = undefined;
  }
  open(timer: BatchAgeTimer): number {
    const now = performance.now();
    this.openedAt = now;
    timer.opened(now);
    return now;
  }
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(1);
  }
}

describe("BatchAgeTimer", () => {
  test("seals each batch once it reaches its age, never before, each partition on its own time", async () => {
    const [a, b] = [new FakeWriter(), new FakeWriter()];
    const timer = new BatchAgeTimer(40, () => [a, b]);
    const openedA = a.open(timer);
    await Bun.sleep(15);
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
    const lateTimer = new BatchAgeTimer(10_000, () => [late]);
    late.open(lateTimer);
    const timer = new BatchAgeTimer(30, () => [early]);
    early.open(timer);
    await until(() => early.sealedAt.length === 1);
    lateTimer.stop();
    expect(late.sealedAt).toEqual([]);
    // After stop nothing is sealed any more.
    early.open(timer);
    timer.stop();
    await Bun.sleep(60);
    expect(early.sealedAt.length).toBe(1);
  });

  test("a writer that cannot seal is not waited for in a loop", async () => {
    const stuck = new FakeWriter();
    stuck.canSeal = false;
    const ok = new FakeWriter();
    const timer = new BatchAgeTimer(20, () => [stuck, ok]);
    stuck.open(timer);
    ok.open(timer);
    await until(() => ok.sealedAt.length === 1);
    let checks = 0;
    const isDue = stuck.isDue.bind(stuck);
    stuck.isDue = (age, now) => {
      checks++;
      return isDue(age, now);
    };
    const reopened = ok.open(timer);
    await until(() => ok.sealedAt.length === 2);
    expect((ok.sealedAt[1] as number) - reopened).toBeGreaterThanOrEqual(20);
    // One check per firing, not a busy loop on the stuck batch.
    expect(checks).toBeLessThanOrEqual(2);
    timer.stop();
  });
});
