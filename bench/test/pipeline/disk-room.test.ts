import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { thrownBy } from "@svc/testkit";
import { BenchError } from "../../src/errors.ts";
import { parseBenchArgs } from "../../src/pipeline/args.ts";
import { checkDiskRoom, DISK_MARGIN_BYTES, diskNeeds, freeBytes } from "../../src/pipeline/disk-room.ts";

const dir = mkdtempSync(join(tmpdir(), "disk-room-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("diskNeeds", () => {
  test("the full run: three topics and two objects and index rows' worth of every record per round, and the latency rows", () => {
    const args = parseBenchArgs(
      ["--records", "1M", "--rates", "1000,10000", "--seconds", "60", "--rounds", "3"].concat([
        "--batch-ages",
        "9000,10010",
      ]),
    );
    const needs = diskNeeds(args);
    // 1k/s and 10k/s at 9 s, and 10k/s again at 10.01 s.
    const latencyRecords = (1000 + 10_000 + 10_000) * 60;
    // The record file, kcat -C's copy per round, the latency rows' files.
    expect(needs.tempBytes).toBe((1_000_000 * 4 + latencyRecords) * 401);
    const perRound = 1_000_000 * (3 * 450 + 2 * (401 + 400));
    expect(needs.stackBytes).toBe(3 * perRound + latencyRecords * (450 + 401 + 400));
  });

  test("only what the sections write: the agent alone fills one topic per round and no object", () => {
    const agent = diskNeeds(parseBenchArgs(["--only", "agent", "--records", "100k", "--rounds", "2"]));
    expect(agent).toEqual({ tempBytes: 100_000 * 401, stackBytes: 2 * 100_000 * 450 });
    const latency = diskNeeds(
      parseBenchArgs([
        "--only",
        "latency",
        "--records",
        "10k",
        "--rates",
        "1000",
        "--seconds",
        "10",
        "--batch-ages",
        "9000",
      ]),
    );
    // The record file is written whatever the sections; a latency row writes its own file too.
    expect(latency).toEqual({ tempBytes: (10_000 + 1000 * 10) * 401, stackBytes: 1000 * 10 * (450 + 401 + 400) });
  });
});

describe("checkDiskRoom", () => {
  const free = () => freeBytes(dir);

  // No margin in these tests but the first: they hold on a machine with less free than the bench's margin too.
  test("a run that fits goes on", () => {
    expect(() => checkDiskRoom({ tempBytes: 1, stackBytes: 1 }, dir, dir, 0)).not.toThrow();
  });

  test("a run larger than the free space is refused with BENCH_DISK_LOW, naming the place and the way out", () => {
    const error = thrownBy(
      () => checkDiskRoom({ tempBytes: 2 * free() + 1, stackBytes: 0 }, dir, undefined, 0),
      BenchError,
    );
    expect(error.code).toBe("BENCH_DISK_LOW");
    expect(error.subject).toBe(dir);
    expect(error.message).toContain("ops/dev down --purge");
  });

  test("the bench's margin stays free: a run that would leave less than it is refused", () => {
    const leavesHalfTheMargin = free() - DISK_MARGIN_BYTES / 2;
    const error = thrownBy(
      () => checkDiskRoom({ tempBytes: leavesHalfTheMargin, stackBytes: 0 }, dir, undefined),
      BenchError,
    );
    expect(error.code).toBe("BENCH_DISK_LOW");
  });

  test("the record file and the stack on one file system add up; a stack directory that is not here is not checked", () => {
    // Each alone fits; both together do not.
    const half = Math.floor(free() * 0.6);
    expect(() => checkDiskRoom({ tempBytes: half, stackBytes: 0 }, dir, undefined, 0)).not.toThrow();
    const error = thrownBy(() => checkDiskRoom({ tempBytes: half, stackBytes: half }, dir, join(dir), 0), BenchError);
    expect(error.code).toBe("BENCH_DISK_LOW");
    expect(error.message).toContain("Kafka's topics and MinIO's objects");
    expect(() =>
      checkDiskRoom({ tempBytes: half, stackBytes: half }, dir, join(dir, "no-stack-here"), 0),
    ).not.toThrow();
  });
});
