import { matches } from "./matches.ts";
import type { SeedAction } from "./seed-report.ts";

/**
 * The seed's one rule: read the current state, create it when missing, update it only when a desired field differs.
 */
export async function ensure<T>(steps: {
  desired: Record<string, unknown>;
  read: () => Promise<T | undefined>;
  create: () => Promise<void>;
  update: (current: T) => Promise<void>;
}): Promise<SeedAction> {
  const current = await steps.read();
  if (current === undefined) {
    await steps.create();
    return "created";
  }
  if (matches(steps.desired, current)) return "unchanged";
  await steps.update(current);
  return "updated";
}
