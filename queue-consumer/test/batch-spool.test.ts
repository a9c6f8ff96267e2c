import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { type TempDir, tempDir, thrownBy } from "@svc/testkit";
import { BatchSpool, MemoryBody, PartitionBatch, QueueConsumerError, readIndexFields } from "../index.ts";
import { forEachLine } from "../src/batch-body.ts";
import { SpoolBody } from "../src/spool-body.ts";
import { encodedEvents, recordLine } from "./helpers.ts";

let root: TempDir;
const host = hostname().replace(/[^A-Za-z0-9.-]/g, "_");
beforeAll(async () => {
  root = await tempDir("qc-spool");
});
afterAll(async () => {
  await root.remove();
});

/** Lines of many sizes: small ones filling several 1 MiB reads, one past the 256 KiB stage, one past a 1 MiB read. */
function mixedLines(): Buffer[] {
  const lines: Buffer[] = [];
  for (let i = 0; i < 6_000; i += 1)
    lines.push(Buffer.from(recordLine(`e${i}`, `t${i % 5}`, "2026-11-27T10:00:00.000Z")));
  lines.splice(2_000, 0, Buffer.alloc(300 * 1024, 0x61));
  lines.splice(4_000, 0, Buffer.alloc(1536 * 1024, 0x62));
  return lines;
}

function spooled(lines: Buffer[], name = "batch.jsonl"): SpoolBody {
  const body = new SpoolBody(join(root.path, `${crypto.randomUUID()}-${name}`));
  for (const line of lines) body.append(line);
  body.finish();
  return body;
}

describe("SpoolBody", () => {
  test("the file holds the lines; CRC-32, length and each line read back match the bytes", async () => {
    const lines = mixedLines();
    const body = spooled(lines);
    const expected = Buffer.concat(lines.flatMap((line) => [line, Buffer.from("\n")]));
    expect(body.length).toBe(expected.length);
    expect(body.contents().equals(expected)).toBe(true);
    expect(statSync(body.path).size).toBe(expected.length);
    expect(body.crc32()).toBe(crc32(expected));
    expect(Buffer.from(await body.payload().arrayBuffer()).equals(expected)).toBe(true);
    expect(body.hasBackslash()).toBe(false);

    const seen: { line: string; byteStart: number }[] = [];
    forEachLine(body, Uint32Array.from(lines.map((l) => l.length)), (buffer, start, end, byteStart) =>
      seen.push({ line: buffer.toString("latin1", start, end), byteStart }),
    );
    expect(seen.map((s) => s.line)).toEqual(lines.map((l) => l.toString("latin1")));
    let at = 0;
    for (const [i, line] of lines.entries()) {
      expect(seen[i]?.byteStart).toBe(at);
      at += line.length + 1;
    }
    body.discard();
    expect(existsSync(body.path)).toBe(false);
  });

  test("a backslash anywhere is seen, in a staged line or in a line written past the stage", () => {
    expect(spooled([Buffer.from('{"a":"x\\"y"}')]).hasBackslash()).toBe(true);
    expect(spooled([Buffer.from("{}"), Buffer.alloc(400 * 1024, 0x5c)]).hasBackslash()).toBe(true);
  });

  test("indexing a spooled batch gives the rows a heap batch gives", () => {
    const lines = mixedLines();
    const inFile = new PartitionBatch("t", 0, new SpoolBody(join(root.path, `${crypto.randomUUID()}.jsonl`)));
    const inHeap = new PartitionBatch("t", 0, new MemoryBody(64));
    lines.forEach((line, i) => {
      inFile.add(line, BigInt(i), 0, 1);
      inHeap.add(line, BigInt(i), 0, 1);
    });
    const fromFile = readIndexFields(inFile.close());
    const fromHeap = readIndexFields(inHeap.close());
    expect(encodedEvents(fromFile).length).toBe(6_000);
    expect(encodedEvents(fromFile)).toEqual(encodedEvents(fromHeap));
    expect(fromFile.unindexable).toBe(2);
    expect([fromFile.minTime, fromFile.maxTime]).toEqual([fromHeap.minTime, fromHeap.maxTime]);
  });

  test("a file that cannot be created fails with QUEUE_CONSUMER_SPOOL_FAILED naming it", () => {
    const path = join(root.path, "no-such-dir", "1.jsonl");
    const body = new SpoolBody(path);
    body.append(Buffer.from("{}"));
    const error = thrownBy(() => body.finish(), QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
    expect(error.subject).toBe(path);
    expect(error.canRetry).toBe(false);
  });

  test("an error of the line callback passes through as it is, not as the spool's", () => {
    const body = spooled([Buffer.from("{}")]);
    const own = new Error("the reader's own");
    expect(() =>
      forEachLine(body, Uint32Array.from([2]), () => {
        throw own;
      }),
    ).toThrow(own);
  });

  test("a file cut short under it fails the read with QUEUE_CONSUMER_SPOOL_FAILED", () => {
    const lines = [Buffer.from("{}"), Buffer.from('{"b":1}')];
    const body = spooled(lines);
    truncateSync(body.path, 4);
    const error = thrownBy(() => forEachLine(body, Uint32Array.from([2, 7]), () => {}), QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
  });
});

describe("BatchSpool", () => {
  test("one directory per writer, a file per batch, all removed at close", () => {
    const own = join(root.path, "own");
    const spool = BatchSpool.open(own);
    const body = spool.newBody();
    body.append(Buffer.from("{}"));
    body.finish();
    expect(readdirSync(own)).toEqual([spool.dir.slice(own.length + 1)]);
    expect(spool.dir).toMatch(new RegExp(`/svc-audit-spool-${host}-${process.pid}-\\d+-[A-Za-z0-9]{6}$`));
    expect(readdirSync(spool.dir)).toEqual(["1.jsonl"]);
    spool.close();
    expect(readdirSync(own)).toEqual([]);
  });

  test("directories of this host's writers that died are removed at open; a live writer's, another host's and other files are kept", async () => {
    const shared = join(root.path, "shared");
    mkdirSync(shared);
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const names = {
      deadPid: `svc-audit-spool-${host}-${gone.pid}-1700000000000-aaaaaa`,
      thisPidEarlierStart: `svc-audit-spool-${host}-${process.pid}-1700000000000-bbbbbb`,
      // The test runner's parent: alive for as long as this test runs.
      livePid: `svc-audit-spool-${host}-${process.ppid}-1700000000000-cccccc`,
      otherHostSamePid: `svc-audit-spool-other-host-${process.pid}-1700000000000-dddddd`,
      other: "not-a-spool",
    };
    for (const name of Object.values(names)) {
      mkdirSync(join(shared, name));
      writeFileSync(join(shared, name, "1.jsonl"), "{}\n");
    }
    const sibling = BatchSpool.open(shared);
    const spool = BatchSpool.open(shared);
    expect(readdirSync(shared).sort()).toEqual(
      [
        names.livePid,
        names.otherHostSamePid,
        names.other,
        sibling.dir.slice(shared.length + 1),
        spool.dir.slice(shared.length + 1),
      ].sort(),
    );
    spool.close();
    sibling.close();
  });

  test("a root that cannot be a directory fails with QUEUE_CONSUMER_SPOOL_FAILED naming it", () => {
    const file = join(root.path, "a-file");
    writeFileSync(file, "x");
    const error = thrownBy(() => BatchSpool.open(join(file, "spool")), QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_SPOOL_FAILED");
    expect(error.subject).toBe(join(file, "spool"));
  });
});
