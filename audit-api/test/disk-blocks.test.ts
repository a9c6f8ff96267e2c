/**
 * The block cache's disk tier (src/disk-blocks.ts) in a temporary directory: a block kept and read back, also by the
 * next process over the slab; the budget by recency; a damaged or cut slot found, freed and read elsewhere; a slab of
 * another block size removed; writes beyond the ones at once skipped; a directory that cannot be used at start
 * (AUDIT_API_DISK_CACHE_FAILED); a write the file system refuses (EFBIG under a file size limit, in a child process),
 * counted and reported, no read failing.
 */
import { expect, test } from "bun:test";
import { existsSync, openSync, readSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { inTempDir, rejectionOf } from "@svc/testkit";
import { AuditApiError, DISK_WRITES_AT_ONCE, DiskBlocks, type DiskBlocksStats } from "../index.ts";

/** 44 header bytes before each slot's data. */
const HEADER = 44;
const BLOCK = 1024;
const SLOT = HEADER + BLOCK;
const bytesOf = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff);

function reports() {
  const seen: { failures: number; message: string }[] = [];
  return { seen, report: (failures: number, last: Error) => seen.push({ failures, message: last.message }) };
}

const openIn = (dir: string, slots: number, report = reports().report) =>
  DiskBlocks.open(dir, { maxBytes: slots * SLOT, blockBytes: BLOCK, report });

/** Flips one byte of the slab at `offset`. */
function flip(path: string, offset: number): void {
  const fd = openSync(path, "r+");
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, offset);
  one[0] = (one[0] as number) ^ 0x01;
  writeSync(fd, one, 0, 1, offset);
}

test("a block kept is read back, by this process and by the next one over the slab", () =>
  inTempDir("disk-blocks", async (dir) => {
    const blocks = await openIn(dir, 8);
    expect(await blocks.get("a")).toBeUndefined();
    blocks.put("a", bytesOf(1000, 1));
    blocks.put("b", bytesOf(BLOCK, 2));
    await blocks.idle();
    expect(await blocks.get("a")).toEqual(bytesOf(1000, 1));
    expect(await blocks.get("b")).toEqual(bytesOf(BLOCK, 2));
    expect(blocks.stats).toEqual({ hits: 2, misses: 1, written: 2, skipped: 0, failures: 0 });
    expect(blocks.bytes).toBe(1000 + BLOCK + 2 * HEADER);
    await blocks.close();

    const next = await openIn(dir, 8);
    expect(next.count).toBe(2);
    expect(next.bytes).toBe(1000 + BLOCK + 2 * HEADER);
    expect(await next.get("a")).toEqual(bytesOf(1000, 1));
    expect(await next.get("b")).toEqual(bytesOf(BLOCK, 2));
    await next.close();
    expect(() => next.put("c", bytesOf(10, 3))).not.toThrow(); // after close: not kept
    expect(next.stats.written).toBe(0);
  }));

test("the budget holds: the least recently used block's slot is taken (a read makes a block recent)", () =>
  inTempDir("disk-blocks", async (dir) => {
    const blocks = await openIn(dir, 3);
    for (const id of ["a", "b", "c"]) {
      blocks.put(id, bytesOf(100, id.charCodeAt(0)));
      await blocks.idle();
    }
    expect(await blocks.get("a")).toBeDefined(); // a is now the most recent: b goes first
    blocks.put("d", bytesOf(100, 4));
    await blocks.idle();
    expect(blocks.count).toBe(3);
    expect(await blocks.get("b")).toBeUndefined();
    expect(await blocks.get("a")).toEqual(bytesOf(100, "a".charCodeAt(0)));
    expect(await blocks.get("c")).toEqual(bytesOf(100, "c".charCodeAt(0)));
    expect(await blocks.get("d")).toEqual(bytesOf(100, 4));
    await blocks.close();

    // A smaller budget at the next start cuts the slab: the slots past its end are gone.
    const smaller = await openIn(dir, 1);
    expect(smaller.count).toBe(1);
    await smaller.close();
  }));

test("a damaged or cut slot is freed, counted and reported, and its block is a miss", () =>
  inTempDir("disk-blocks", async (dir) => {
    const { seen, report } = reports();
    const blocks = await openIn(dir, 4, report);
    blocks.put("flipped", bytesOf(500, 7));
    blocks.put("cut", bytesOf(500, 8));
    await blocks.idle();
    const slab = join(dir, `blocks-${BLOCK}.slab`);
    flip(slab, (blocks.offsetOf("flipped") as number) + HEADER + 200);
    const cut = blocks.offsetOf("cut") as number;
    await blocks.close();
    truncateSync(slab, cut + HEADER + 100); // the slab's end fell within the block's data

    const reopened = await DiskBlocks.open(dir, { maxBytes: 4 * SLOT, blockBytes: BLOCK, report });
    // Reopening restored the slab's size; the cut block's bytes past the cut read as zeros.
    expect(reopened.count).toBe(2);
    expect(await reopened.get("flipped")).toBeUndefined();
    expect(await reopened.get("cut")).toBeUndefined();
    expect(reopened.stats.failures).toBe(2);
    expect(seen).toHaveLength(1); // reported once a minute at most
    expect(seen[0]?.message).toContain("does not hold its block whole");
    expect(reopened.count).toBe(0);
    // Freed: both slots are used again.
    for (const id of ["x", "y", "z", "w"]) reopened.put(id, bytesOf(10, 1));
    await reopened.idle();
    expect(reopened.count).toBe(4);
    await reopened.close();
  }));

test("at start, a slab of another block size is removed and other files are left alone", () =>
  inTempDir("disk-blocks", async (dir) => {
    writeFileSync(join(dir, "blocks-4096.slab"), "an older setting's slab");
    writeFileSync(join(dir, "README"), "not a slab");
    const blocks = await openIn(dir, 2);
    expect(blocks.count).toBe(0);
    expect(existsSync(join(dir, "blocks-4096.slab"))).toBe(false);
    expect(existsSync(join(dir, "README"))).toBe(true);
    await blocks.close();
  }));

test("blocks offered while DISK_WRITES_AT_ONCE writes run are skipped and counted, not queued; a block too large is refused", () =>
  inTempDir("disk-blocks", async (dir) => {
    const blocks = await openIn(dir, DISK_WRITES_AT_ONCE + 2);
    const ids = Array.from({ length: DISK_WRITES_AT_ONCE + 1 }, (_, i) => String(i));
    for (const id of [...ids, "0"]) blocks.put(id, bytesOf(64, 1));
    await blocks.idle();
    expect(blocks.stats.written).toBe(DISK_WRITES_AT_ONCE);
    expect(blocks.stats.skipped).toBe(1); // the last new one; the second "0" was already being written
    expect(await blocks.get(String(DISK_WRITES_AT_ONCE))).toBeUndefined();
    expect(() => blocks.put("big", bytesOf(BLOCK + 1, 1))).toThrow(RangeError);
    await blocks.close();
  }));

test("a directory that cannot be created is AUDIT_API_DISK_CACHE_FAILED naming SVC_AUDIT_API_DISK_CACHE_DIR", () =>
  inTempDir("disk-blocks", async (dir) => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    const error = await rejectionOf(openIn(join(file, "blocks"), 2), AuditApiError);
    expect(error.code).toBe("AUDIT_API_DISK_CACHE_FAILED");
    expect(error.subject).toBe("SVC_AUDIT_API_DISK_CACHE_DIR");
    await expect(openIn(dir, 0)).rejects.toThrow(RangeError);
  }));

test("a write the file system refuses (EFBIG past a file size limit) is counted and reported; reads go on", () =>
  inTempDir("disk-blocks", async (dir) => {
    // The slab made whole first: the child may then write slot 0 and no further.
    await (await openIn(dir, 4)).close();
    const script = join(dir, "child.ts");
    writeFileSync(
      script,
      [
        `import { DiskBlocks } from ${JSON.stringify(join(import.meta.dir, "../index.ts"))};`,
        "const seen = [];",
        `const blocks = await DiskBlocks.open(${JSON.stringify(dir)}, { maxBytes: ${4 * SLOT}, blockBytes: ${BLOCK},`,
        "  report: (failures, last) => seen.push([failures, last.code ?? last.message]) });",
        'blocks.put("first", new Uint8Array(100).fill(1));',
        'blocks.put("second", new Uint8Array(100).fill(2));',
        "await blocks.idle();",
        'const first = await blocks.get("first");',
        'const second = await blocks.get("second");',
        "console.log(JSON.stringify({ stats: blocks.stats, seen, first: first?.length, second: second?.length }));",
      ].join("\n"),
    );
    const child = Bun.spawnSync(["prlimit", `--fsize=${SLOT}`, process.execPath, script]);
    expect(child.exitCode).toBe(0);
    const out = JSON.parse(child.stdout.toString().trim().split("\n").at(-1) as string) as {
      stats: DiskBlocksStats;
      seen: [number, string][];
      first?: number;
      second?: number;
    };
    expect(out.stats.written).toBe(1);
    expect(out.stats.failures).toBe(1);
    expect(out.seen).toEqual([[1, "EFBIG"]]);
    expect(out.first).toBe(100);
    expect(out.second).toBeUndefined();
  }));
