/** Lets loops sleep until something changed (an ack, a resume, a stop) or a timeout passed, whichever is first. */
export class Wakeup {
  #waiters: (() => void)[] = [];

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
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  }
}
