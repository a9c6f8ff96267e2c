import { describe, expect, test } from "bun:test";
import { hourRollups, minuteBin, RollupCounter, type RollupRow, rollupColumns } from "../src/rollup-counts.ts";

const event = (time: string, principal = "p1", action = "a", result = "ok", tenant = "t1") => ({
  tenant_id: tenant,
  principal_id: principal,
  action,
  result,
  timeMs: Date.parse(time),
});

/** The same counts by a key string per event: the reference. */
function reference(events: ReturnType<typeof event>[], binMs: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) {
    const key = [e.tenant_id, Math.floor(e.timeMs / binMs) * binMs, e.principal_id, e.action, e.result].join("|");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** The minute rollup of `events` as the writer counts them, and its hours. */
function rollups(events: ReturnType<typeof event>[]): { minutes: RollupRow[]; hours: RollupRow[] } {
  const minutes = new RollupCounter();
  for (const e of events) minutes.add(e.tenant_id, e.principal_id, e.action, e.result, minuteBin(e.timeMs), 1);
  return { minutes: minutes.rows, hours: hourRollups(minutes.rows) };
}

const asMap = (rows: readonly RollupRow[]) =>
  new Map(rows.map((r) => [[r.tenant_id, r.bin, r.principal_id, r.action, r.result].join("|"), r.n]));

describe("rollups", () => {
  test("counts per tenant, principal, action, result and UTC minute; hours are the minutes summed", () => {
    const events = [
      event("2026-11-23T09:59:59.999Z"),
      event("2026-11-23T10:00:00Z"),
      event("2026-11-23T10:00:30+00:00"),
      event("2026-11-23T11:00:30+01:00"), // 10:00:30Z
      event("2026-11-23T10:00:01Z", "p2"),
      event("2026-11-23T10:00:01Z", "p1", "b"),
      event("2026-11-23T10:00:01Z", "p1", "a", "denied"),
      event("2026-11-23T10:00:01Z", "p1", "a", "ok", "t2"),
      event("1969-12-31T23:59:59.999Z"),
    ];
    const { minutes, hours } = rollups(events);
    expect(asMap(minutes)).toEqual(reference(events, 60_000));
    expect(asMap(hours)).toEqual(reference(events, 3_600_000));
    const tenAm = minutes.find((r) => r.bin === Date.parse("2026-11-23T10:00:00Z") && r.principal_id === "p1");
    expect(tenAm?.n).toBe(3);
    expect(minutes.reduce((sum, r) => sum + r.n, 0)).toBe(events.length);
    expect(hours.reduce((sum, r) => sum + r.n, 0)).toBe(events.length);
  });

  test("a thousand events over many groups agree with the reference", () => {
    const events = Array.from({ length: 1_000 }, (_, i) =>
      event(new Date(Date.parse("2026-11-23T09:50:00Z") + i * 1_357).toISOString(), `p${i % 7}`, `a${i % 3}`),
    );
    const { minutes, hours } = rollups(events);
    expect(asMap(minutes)).toEqual(reference(events, 60_000));
    expect(asMap(hours)).toEqual(reference(events, 3_600_000));
  });

  test("as unnest columns: one array literal per column, bins in seconds from the epoch", () => {
    const { minutes } = rollups([event("2026-11-23T10:00:30Z"), event("2026-11-23T10:00:40Z", 'p"q')]);
    expect(rollupColumns(minutes, true)).toEqual({
      tenant_id: '{"t1","t1"}',
      bin: `{${Date.parse("2026-11-23T10:00:00Z") / 1000},${Date.parse("2026-11-23T10:00:00Z") / 1000}}`,
      principal_id: '{"p1","p\\"q"}',
      action: '{"a","a"}',
      result: '{"ok","ok"}',
      n: "{1,1}",
    });
  });
});
