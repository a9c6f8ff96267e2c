import type { ElectionEvent, ElectionListener, ElectionRole, Elector, LeadershipSnapshot } from "./elector.ts";
import type { LeaseAttempt, LeaseLock } from "./lease-lock.ts";
import type { LeaseTimings } from "./lease-timings.ts";
import { withRequestTimeout } from "./request-timeout.ts";

export interface LeaseElectorOptions {
  backend: string;
  identity: string;
  lock: LeaseLock;
  timings: LeaseTimings;
  /** Failures of single attempts (the loop goes on); default: ignored. */
  onAttemptError?: (error: unknown) => void;
  /** Monotonic milliseconds; tests may not replace the wall clock here on purpose. */
  now?: () => number;
  random?: () => number;
}

const ms = (seconds: number) => Math.round(seconds * 1000);

/**
 * client-go's leaderelection loop over a `LeaseLock`:
 * - a follower tries every 0.5 to 0.9 retry periods (client-go: 1 to 2.2), and also right when the holder's lease
 *   expires by the lock's rule, so neither a release nor an expiry waits for a late jittered retry;
 * - the leader renews every retry period; its renew deadline runs from the moment it SENT its last successful
 *   renewal (on the monotonic clock), so it stops before any follower can see the lease as expired. When the
 *   deadline passes, leadership ends at once (the timer fires and `isServing()` checks the deadline itself, so a
 *   busy event loop cannot stretch it), the leader signal aborts, `lost-leadership` is emitted and the loop ends:
 *   the process is expected to exit (the platform restarts it);
 * - `stop()` ends leader work first, then releases the lock (client-go's ReleaseOnCancel);
 * - when the lock has a change feed (the Lease's watch), a follower also tries at once when it sees the holder
 *   change or the lock released, instead of at its next poll; a broken feed is reported, polling goes on, and the
 *   feed is opened again a retry period later. Every decision is still the lock's (no early takeover).
 */
export class LeaseElector implements Elector {
  readonly backend: string;
  readonly identity: string;
  private readonly lock: LeaseLock;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onAttemptError: (error: unknown) => void;
  private readonly listeners = new Set<ElectionListener>();

  private started = false;
  private stopped = false;
  private leading = false;
  private term: number | undefined;
  private holder: string | undefined;
  private role: ElectionRole = "follower";
  private since = new Date();
  /** Monotonic time at which the last successful renewal (or the acquisition) was sent. */
  private lastRenewSentAt = 0;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  private leaderController: AbortController | undefined;
  private readonly loopController = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private stopping: Promise<void> | undefined;
  private watchDone: Promise<void> = Promise.resolve();
  /** Ends the follower's current sleep; set while it sleeps. */
  private wakeSleeper: (() => void) | undefined;
  /** A change seen while an attempt was running: the next sleep ends at once. */
  private wakePending = false;

  constructor(options: LeaseElectorOptions) {
    this.backend = options.backend;
    this.identity = options.identity;
    this.lock = options.lock;
    this.renewDeadlineMs = ms(options.timings.renewDeadlineSeconds);
    this.retryMs = ms(options.timings.retryPeriodSeconds);
    this.now = options.now ?? (() => performance.now());
    this.random = options.random ?? Math.random;
    this.onAttemptError = options.onAttemptError ?? (() => {});
  }

  subscribe(listener: ElectionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  snapshot(): LeadershipSnapshot {
    return {
      identity: this.identity,
      role: this.isServing() ? "leader" : this.role === "leader" ? "follower" : this.role,
      holder: this.holder,
      term: this.term,
      since: this.since,
      stopped: this.stopped,
    };
  }

  isServing(): boolean {
    return this.leading && this.now() - this.lastRenewSentAt < this.renewDeadlineMs;
  }

  currentTerm(): number | undefined {
    return this.isServing() ? this.term : undefined;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.lock.prepare?.(this.renewDeadlineMs);
    const first = await this.attempt();
    this.loopDone = this.loop(first);
    if (this.lock.watch) this.watchDone = this.watchLoop();
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    this.stopped = true;
    this.loopController.abort();
    const wasLeading = this.leading;
    if (wasLeading) this.endLeadership("released on shutdown", true);
    await this.loopDone;
    await this.watchDone;
    try {
      if (wasLeading) await this.lock.release(this.renewDeadlineMs);
    } finally {
      await this.lock.close?.();
    }
  }

  private emit(event: ElectionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onAttemptError(error);
      }
    }
  }

  private setRole(role: ElectionRole): void {
    if (role === this.role) return;
    this.role = role;
    this.since = new Date();
  }

  /** One attempt; a failure is reported and counts as "no lock". */
  private async attempt(): Promise<{ sentAt: number; result: LeaseAttempt | undefined }> {
    const sentAt = this.now();
    const timeoutMs = this.leading
      ? Math.max(1, this.renewDeadlineMs - (sentAt - this.lastRenewSentAt))
      : this.renewDeadlineMs;
    try {
      // The lock passes the timeout on to its requests; the race makes sure a request that ignores it still ends.
      const leading = this.leading;
      const result = await withRequestTimeout(this.lock.description, timeoutMs + 50, () =>
        this.lock.tryAcquireOrRenew(leading, timeoutMs),
      );
      return { sentAt, result };
    } catch (error) {
      this.onAttemptError(error);
      return { sentAt, result: undefined };
    }
  }

  private async loop(first: { sentAt: number; result: LeaseAttempt | undefined }): Promise<void> {
    let outcome = first;
    while (!this.stopped) {
      this.apply(outcome.sentAt, outcome.result);
      if (this.stopped) return;
      await this.sleep(this.nextDelay(outcome.result));
      if (this.stopped) return;
      outcome = await this.attempt();
    }
  }

  /** Keeps the lock's change feed open while the elector runs; the feed only wakes the follower's loop. */
  private async watchLoop(): Promise<void> {
    const signal = this.loopController.signal;
    const watch = this.lock.watch?.bind(this.lock);
    if (!watch) return;
    while (!this.stopped) {
      try {
        await watch((holder) => this.changed(holder), signal);
      } catch (error) {
        if (this.stopped) return;
        // Broken (apiserver gone, 410 Gone, idle): the loop polls meanwhile; open it again a retry period later.
        this.onAttemptError(error);
        await this.sleep(this.retryMs, false);
      }
    }
  }

  private changed(holder: string | undefined): void {
    if (this.stopped || this.leading || holder === this.holder) return;
    if (this.wakeSleeper) this.wakeSleeper();
    else this.wakePending = true;
  }

  private nextDelay(result: LeaseAttempt | undefined): number {
    if (this.leading) return this.retryMs;
    // client-go waits 1 to 2.2 retry periods; a follower here polls every 0.5 to 0.9 of one (a GET each), so a
    // released Lease is taken within a retry period, and two followers still spread their attempts.
    const jittered = this.retryMs * (0.5 + 0.4 * this.random());
    const expiresIn = result?.expiresInMs;
    if (expiresIn === undefined) return jittered;
    return Math.min(jittered, Math.max(0, expiresIn) + 5);
  }

  private apply(sentAt: number, result: LeaseAttempt | undefined): void {
    if (this.stopped) return;
    if (result && !result.leader && !this.leading && result.term !== undefined) this.term = result.term;
    if (result && result.holder !== this.holder && (result.holder !== undefined || result.expiresInMs !== undefined)) {
      this.holder = result.holder;
      if (!result.leader) this.emit({ type: "new-leader-observed", holder: result.holder, term: result.term });
    }
    if (this.leading) {
      if (result?.leader && sentAt - this.lastRenewSentAt >= this.renewDeadlineMs) {
        // Sent after the deadline (a late timer under load): the leadership had already lapsed.
        this.endLeadership("renew deadline passed", false);
      } else if (result?.leader) {
        this.lastRenewSentAt = sentAt;
        this.armDeadline();
      } else if (result && result.holder !== this.identity) {
        // Someone else holds it: never keep serving on a lease we cannot prove.
        this.endLeadership(`lock held by ${result.holder ?? "nobody"}`, false);
      }
      // A failed attempt, or a conflict on a record that still names us (an earlier renewal that timed out here
      // but was applied): keep trying, as client-go does, until the deadline timer ends the leadership.
      return;
    }
    if (result?.leader && result.term !== undefined) {
      // A renewal that arrives after a deadline passed cannot revive a lost leadership: the loop ended then.
      this.leading = true;
      this.term = result.term;
      this.holder = this.identity;
      this.lastRenewSentAt = sentAt;
      this.armDeadline();
      if (!this.isServing()) {
        this.endLeadership("acquired after the renew deadline had passed", false);
        return;
      }
      this.setRole("leader");
      this.leaderController = new AbortController();
      this.emit({ type: "became-leader", term: result.term, signal: this.leaderController.signal });
    }
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    const remaining = this.renewDeadlineMs - (this.now() - this.lastRenewSentAt);
    this.deadlineTimer = setTimeout(
      () => {
        if (this.leading && !this.isServing()) this.endLeadership("renew deadline passed", false);
        else if (this.leading) this.armDeadline();
      },
      Math.max(0, remaining),
    );
  }

  /** Ends leadership at once; unless released, the elector stops too (the process should exit). */
  private endLeadership(reason: string, released: boolean): void {
    if (!this.leading) return;
    this.leading = false;
    clearTimeout(this.deadlineTimer);
    this.setRole("follower");
    this.leaderController?.abort(new Error(reason));
    this.leaderController = undefined;
    if (!released) {
      this.stopped = true;
      this.loopController.abort();
    }
    this.emit({ type: "lost-leadership", term: this.term ?? 0, reason, released });
  }

  /** Sleeps `delayMs`, less when stopped or (`wakeable`, the follower's loop) when the lock is seen to change. */
  private sleep(delayMs: number, wakeable = true): Promise<void> {
    const signal = this.loopController.signal;
    if (signal.aborted) return Promise.resolve();
    if (wakeable && this.wakePending && !this.leading) {
      this.wakePending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, delayMs);
      const self = this;
      if (wakeable) this.wakeSleeper = done;
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        if (wakeable && self.wakeSleeper === done) self.wakeSleeper = undefined;
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }
}
