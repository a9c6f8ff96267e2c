/** Lets loops sleep until something changed (an ack, a resume, a stop) or a timeout passed, whichever is first. */
export class Wakeup {
  #waiters: (() => void)[] = [];
  #wakes = 0;

  /** How many times `wake()` was called: read it before a check, hand it to `waitSince` after. */
  get wakes(): number {
    return this.#wakes;
  }

  /**
   * `wait`, unless `wake()` was called since `wakes` was read: then at once. A wake that comes while the loop is still
   * checking (no one waits yet) is not lost, as it is with `wait`.
   */
  waitSince(wakes: number, timeoutMs?: number): Promise<void> {
    if (this.#wakes !== wakes) return Promise.resolve();
    return this.wait(timeoutMs);
  }

  /** Resolves at the next `wake()`, or after `timeoutMs` when given. */
  wait(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        resolve();
      };
      this.#waiters.push(done);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.#waiters = this.#waiters.filter((waiter) => waiter !== done);
          resolve();
        }, timeoutMs);
      }
    });
  }

  wake(): void {
    this.#wakes += 1;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  }
}
