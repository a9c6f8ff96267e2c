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

test("snapshot: records arriving out of order come back in (time, id) order, the range bounds exact", () => {
  const store = new TailStore();
  const offsets = [5, 1, 4, 0, 3, 2]; // arrival order of records r0..r5 (time T0 + i s)
  for (const [k, i] of offsets.entries()) store.add(0, BigInt(k), line(sampleRecord(`r${i}`, "t1", T0 + i * 1_000)));
  expect(store.snapshot("t1", RANGE).map((r) => r.id)).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
  const range = { start: new Date(T0 + 1_000).toISOString(), end: new Date(T0 + 4_000).toISOString() };
  expect(store.snapshot("t1", range).map((r) => r.id)).toEqual(["r1", "r2", "r3"]);
  // Bounds with more digits than the tail's microseconds: start inclusive, end exclusive, compared as times.
  const fine = { start: "2026-09-09T09:00:01.000000001Z", end: "2026-09-09T09:00:03.0000000Z" };
  expect(store.snapshot("t1", fine).map((r) => r.id)).toEqual(["r2"]);
  expect(store.snapshot("t1", { start: range.end, end: range.start })).toEqual([]);
});

test("snapshot with a principal: only that principal's records, in range, with the other filters", () => {
  const store = new TailStore();
  for (let i = 0; i < 20; i++) {
    const principal = i % 4 === 0 ? "svc-probe" : "svc-app";
    const result = i % 8 === 0 ? "PERMISSION_DENIED" : "OK";
    store.add(
      i % 3,
      BigInt(i),
      line(
        sampleRecord(`e${String(i).padStart(2, "0")}`, "t1", T0 + (19 - i) * 1_000, {
          principal_id: principal,
          result,
        }),
      ),
    );
  }
  store.add(0, 100n, line(sampleRecord("other-tenant", "t2", T0, { principal_id: "svc-probe" })));
  expect(store.snapshot("t1", { ...RANGE, principalId: "svc-probe" }).map((r) => r.id)).toEqual([
    "e16",
    "e12",
    "e08",
    "e04",
    "e00",
  ]);
  const range = { start: new Date(T0 + 3_000).toISOString(), end: new Date(T0 + 15_000).toISOString() };
  expect(store.snapshot("t1", { ...range, principalId: "svc-probe" }).map((r) => r.id)).toEqual(["e16", "e12", "e08"]);
  expect(
    store.snapshot("t1", { ...RANGE, principalId: "svc-probe", result: "PERMISSION_DENIED" }).map((r) => r.id),
  ).toEqual(["e16", "e08", "e00"]);
  expect(store.snapshot("t1", { ...RANGE, principalId: "nobody" })).toEqual([]);
  expect(store.snapshot("t2", { ...RANGE, principalId: "svc-probe" }).map((r) => r.id)).toEqual(["other-tenant"]);
});

test("advanceMarks trims the tenant's and the principal's lists alike; a copy above its mark stays", () => {
  const store = new TailStore();
  for (let i = 0; i < 6; i++) {
    const principal = i % 2 === 0 ? "svc-probe" : "svc-app";
    store.add(0, BigInt(i), line(sampleRecord(`r${i}`, "t1", T0 + i, { principal_id: principal })));
  }
  store.add(1, 0n, line(sampleRecord("r0", "t1", T0, { principal_id: "svc-probe" }))); // r0 shipped twice
  expect(store.snapshot("t1", { ...RANGE, principalId: "svc-probe" }).map((r) => [r.id, r.partition])).toEqual([
    ["r0", 0],
    ["r2", 0],
    ["r4", 0],
  ]);
  store.advanceMarks(new Map([[0, 2n]]));
  expect(store.size).toBe(4);
  expect(store.snapshot("t1", RANGE).map((r) => r.id)).toEqual(["r0", "r3", "r4", "r5"]);
  expect(store.snapshot("t1", { ...RANGE, principalId: "svc-probe" }).map((r) => [r.id, r.partition])).toEqual([
    ["r0", 1],
    ["r4", 0],
  ]);
  store.advanceMarks(
    new Map([
      [0, 9n],
      [1, 0n],
    ]),
  );
  expect(store.size).toBe(0);
  expect(store.snapshot("t1", RANGE)).toEqual([]);
  expect(store.snapshot("t1", { ...RANGE, principalId: "svc-probe" })).toEqual([]);
  // A tenant and principal emptied by the marks take new records again.
  expect(store.add(0, 10n, line(sampleRecord("n", "t1", T0, { principal_id: "svc-probe" })))).toBe(true);
  expect(store.snapshot("t1", { ...RANGE, principalId: "svc-probe" }).map((r) => r.id)).toEqual(["n"]);
});

test("snapshot answers as a filter and sort of the whole tail would, for shuffled arrivals with copies", () => {
  const store = new TailStore();
  const added: { id: string; time: string; principal: string; partition: number; offset: bigint }[] = [];
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  const offsets = [0n, 0n, 0n];
  for (let i = 0; i < 400; i++) {
    const copy = i > 0 && random(10) === 0 ? added[random(added.length)] : undefined;
    const id = copy?.id ?? `e${random(1000)}`;
    const timeMs = copy ? Date.parse(copy.time) : T0 + random(50) * 1_000;
    const principal = copy?.principal ?? `p${random(3)}`;
    const partition = random(3);
    const offset = offsets[partition] ?? 0n;
    offsets[partition] = offset + 1n;
    store.add(partition, offset, line(sampleRecord(id, "t1", timeMs, { principal_id: principal })));
    added.push({ id, time: new Date(timeMs).toISOString(), principal, partition, offset });
  }
  const marks = new Map([
    [0, 40n],
    [1, 10n],
    [2, 70n],
  ]);
  store.advanceMarks(marks);
  const key = (r: { time: string; id: string }) => `${Date.parse(r.time)} ${r.id}`;
  for (const principal of [undefined, "p0", "p1", "p2"]) {
    const query = {
      start: new Date(T0 + 10_000).toISOString(),
      end: new Date(T0 + 40_000).toISOString(),
      principalId: principal,
    };
    const expected = added
      .filter((r) => r.offset > (marks.get(r.partition) as bigint))
      .filter((r) => principal === undefined || r.principal === principal)
      .filter((r) => Date.parse(r.time) >= T0 + 10_000 && Date.parse(r.time) < T0 + 40_000)
      .sort((a, b) => Date.parse(a.time) - Date.parse(b.time) || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)))
      .filter((r, i, all) => i === 0 || key(r) !== key(all[i - 1] as typeof r))
      .map(key);
    expect(expected.length).toBeGreaterThan(0);
    expect(store.snapshot("t1", query).map(key)).toEqual(expected);
  }
});
