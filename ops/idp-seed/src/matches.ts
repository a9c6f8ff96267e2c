/**
 * True when every field of `desired` is present in `actual` with an equal value (recursively); fields that only
 * `actual` has (ids, timestamps, server defaults) are ignored. Arrays must have the same elements in any order.
 */
export function matches(desired: unknown, actual: unknown): boolean {
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) return false;
    const rest = [...actual];
    for (const want of desired) {
      const at = rest.findIndex((have) => matches(want, have));
      if (at < 0) return false;
      rest.splice(at, 1);
    }
    return true;
  }
  if (typeof desired === "object" && desired !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false;
    const have = actual as Record<string, unknown>;
    return Object.entries(desired).every(([key, want]) => matches(want, have[key]));
  }
  return desired === actual;
}
