import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomName, rejectionOf, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import { ensureModelTables, RuntimeError, TermFence } from "../index.ts";

// Term fencing on the stack's PostgreSQL, in a schema of this file's own.
const schema = randomName("t_fence").replaceAll("-", "_");
const sql = new SQL({ url: stackEnv().postgresUrl, max: 4 });
const fence = (component = "orchestrator") => new TermFence({ sql, schema, component, stallTimeoutMs: 2_000 });

beforeAll(() => ensureModelTables(sql, schema));
afterAll(async () => {
  await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await sql.close();
});

const marks = () =>
  sql
    .unsafe(`SELECT name FROM ${schema}.indexes ORDER BY name`)
    .then((rows) => rows.map((r: { name: string }) => r.name));
const mark = (name: string) => (tx: Bun.TransactionSQL) =>
  tx.unsafe(`INSERT INTO ${schema}.indexes (name, shard_count) VALUES ($1, 1)`, [name]);

test("a write under the current term commits; after a newer claim the old term's write is refused and rolled back", async () => {
  const f = fence();
  await f.claim(3, "a");
  await f.write(3, mark("by-3"));
  await f.claim(4, "b");
  const error = await rejectionOf(f.write(3, mark("late-3")), RuntimeError);
  expect(error.code).toBe("COMPONENT_FENCED");
  await f.write(4, mark("by-4"));
  expect(await marks()).toEqual(["by-3", "by-4"]);
  expect(await f.current()).toEqual({ term: 4, holder: "b" });
});

test("a claim with an older term, or the same term by another holder, is refused; the same holder may claim again", async () => {
  const f = fence("backend");
  await f.claim(7, "a");
  await f.claim(7, "a");
  expect((await rejectionOf(f.claim(6, "b"), RuntimeError)).code).toBe("COMPONENT_FENCED");
  expect((await rejectionOf(f.claim(7, "b"), RuntimeError)).code).toBe("COMPONENT_FENCED");
  expect(await f.current()).toEqual({ term: 7, holder: "a" });
});

test("a claim waits for the old term's open write, and that write cannot be overtaken by a stale one after it", async () => {
  const f = fence("shaper");
  await f.claim(1, "a");
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered: () => void = () => {};
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const slowWrite = f.write(1, async (tx) => {
    await mark("slow-1")(tx);
    entered();
    await held;
  });
  await inside;
  const claimed = f.claim(2, "b");
  let claimDone = false;
  void claimed.then(() => {
    claimDone = true;
  });
  // The claim cannot pass the open transaction holding the row.
  await sql.unsafe("SELECT pg_sleep(0.2)");
  expect(claimDone).toBe(false);
  release();
  await slowWrite;
  await claimed;
  expect((await rejectionOf(f.write(1, mark("stale-1")), RuntimeError)).code).toBe("COMPONENT_FENCED");
  expect(await marks()).toContain("slow-1");
  expect(await marks()).not.toContain("stale-1");
});

test("a stalled old-term transaction is ended by the database, so the successor's claim gets through", async () => {
  const f = new TermFence({ sql, schema, component: "compute", stallTimeoutMs: 300 });
  await f.claim(1, "a");
  let entered: () => void = () => {};
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const stalled = f.write(1, async (tx) => {
    await mark("stalled-1")(tx);
    entered();
    // The client goes silent inside the transaction (a SIGSTOPped leader): no statement for longer than the bound.
    await Bun.sleep(1_000);
    await tx.unsafe("SELECT 1");
  });
  const outcome = stalled.then(
    () => "committed",
    () => "failed",
  );
  await inside;
  const started = performance.now();
  await f.claim(2, "b");
  // It waited for the database to end the stalled session (~300 ms), not for the stalled client (1 s).
  expect(performance.now() - started).toBeGreaterThan(200);
  expect(await outcome).toBe("failed");
  expect(await marks()).not.toContain("stalled-1");
});
