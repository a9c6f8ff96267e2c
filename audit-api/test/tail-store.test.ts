import { expect, test } from "bun:test";
import { TailStore } from "../index.ts";
import { sampleRecord } from "./support/stored-data.ts";

const T0 = Date.parse("2026-09-09T09:00:00Z");
const line = (value: unknown) => Buffer.from(JSON.stringify(value));
const RANGE = { start: "2026-09-09T00:00:00Z", end: "2026-09-10T00:00:00Z" };

test("add: keeps what the writer would index above the mark, with the writer's tenant rule", () => {
  const store = new TailStore();
  store.advanceMarks(new Map([[0, 9n]]));
  expect(store.add(0, 9n, line(sampleRecord("a", "t1", T0)))).toBe(false);
  expect(store.add(0, 10n, line(sampleRecord("b", "t1", T0)))).toBe(true);
  expect(store.add(1, 0n, line(sampleRecord("c", "t1", T0)))).toBe(true);
  expect(store.add(1, 1n, Buffer.from("{not json"))).toBe(false);
  expect(store.add(1, 2n, line({ id: "d", time: "not a time" }))).toBe(false);
  expect(store.add(1, 3n, line({ ...sampleRecord("e", "", T0), claimed_tenant_id: "t2" }))).toBe(true);
  expect(store.size).toBe(3);
  expect(store.snapshot("t2", RANGE).map((r) => r.id)).toEqual(["e"]);
});

test("advanceMarks drops what the index holds and never lowers a mark", () => {
  const store = new TailStore();
  for (let offset = 0n; offset < 10n; offset++) {
    store.add(0, offset, line(sampleRecord(`r${offset}`, "t1", T0 + Number(offset))));
  }
  store.advanceMarks(new Map([[0, 4n]]));
  expect(store.size).toBe(5);
  store.advanceMarks(new Map([[0, 2n]]));
  expect(store.markOf(0)).toBe(4n);
  expect(store.size).toBe(5);
  expect(store.add(0, 3n, line(sampleRecord("late", "t1", T0)))).toBe(false);
});

test("snapshot: the tenant's records in range and filters, in (time, id) order, one per (time, id)", () => {
  const store = new TailStore();
  const records = [
    sampleRecord("z", "t1", T0 + 2_000),
    sampleRecord("b", "t1", T0 + 1_000, { result: "PERMISSION_DENIED" }),
    sampleRecord("a", "t1", T0 + 1_000, { principal_id: "svc-ops", resource: "key/k" }),
    sampleRecord("x", "t2", T0 + 1_500),
    sampleRecord("late", "t1", Date.parse(RANGE.end)),
  ];
  for (const [i, r] of records.entries()) store.add(0, BigInt(i), line(r));
  store.add(1, 0n, line(records[1])); // the same event shipped twice
  expect(store.snapshot("t1", RANGE).map((r) => r.id)).toEqual(["a", "b", "z"]);
  expect(store.snapshot("t1", { ...RANGE, result: "PERMISSION_DENIED" }).map((r) => r.id)).toEqual(["b"]);
  expect(store.snapshot("t1", { ...RANGE, principalId: "svc-ops" }).map((r) => r.id)).toEqual(["a"]);
  expect(store.snapshot("t1", { ...RANGE, resourcePrefix: "index/" }).map((r) => r.id)).toEqual(["b", "z"]);
  expect(store.snapshot("t1", { ...RANGE, action: "/other" })).toEqual([]);
  expect(store.snapshot("t3", RANGE)).toEqual([]);
});
