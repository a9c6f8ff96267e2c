import { abortableSleep, RuntimeError } from "@svc/component-runtime";
import type { Logger } from "pino";
import type { PlacementStore } from "./placement-store.ts";

export interface SuperviseOptions {
  store: PlacementStore;
  logger: Logger;
  pod: string;
  term: number | undefined;
  signal: AbortSignal;
  tickMs: number;
  nodeTimeoutMs: number;
  /** Called with the term once `recoverState()` is done, and with undefined when the leadership ends. */
  inOffice: (term: number | undefined) => void;
}

const isFenced = (error: unknown) => error instanceof RuntimeError && error.code === "COMPONENT_FENCED";
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The orchestrator leader's duties for one term (spec: Leader-only duties): `recoverState()`, then node supervision
 * and reconciliation every tick until the leadership ends. A fenced write means a successor holds office: the
 * work rejects and the process steps down. Other failures (the database away) are logged and tried again.
 */
export async function supervise(options: SuperviseOptions): Promise<void> {
  const { store, logger, term, signal } = options;
  if (term === undefined) throw new RuntimeError("RUNTIME_CONFIG_INVALID", "orchestrator needs an election");
  signal.addEventListener("abort", () => options.inOffice(undefined), { once: true });
  while (!signal.aborted) {
    try {
      const recovered = await store.recoverState(term, options.pod);
      if (signal.aborted) return;
      options.inOffice(term);
      logger.info({ event: "recovered", term, at: Date.now(), ...recovered }, "recoverState() done");
      break;
    } catch (error) {
      if (isFenced(error)) throw error;
      logger.warn({ err: messageOf(error), term }, "recoverState() failed; trying again");
      await abortableSleep(options.tickMs, signal);
    }
  }
  while (!signal.aborted) {
    try {
      const outcome = await store.tick(term, options.nodeTimeoutMs);
      logger.debug({ event: "tick-written", term, at: Date.now() }, "tick");
      if (outcome.lost.length > 0 || outcome.assigned > 0 || outcome.unassigned > 0) {
        logger.info({ event: "placement", term, at: Date.now(), ...outcome }, "placement changed");
      }
    } catch (error) {
      if (isFenced(error)) {
        logger.warn({ event: "fenced", term, at: Date.now(), err: messageOf(error) }, "write refused: deposed");
        throw error;
      }
      logger.warn({ err: messageOf(error), term }, "supervision tick failed");
    }
    await abortableSleep(options.tickMs, signal);
  }
}
