import { describe, expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { BenchError } from "../../src/errors.ts";
import { parseBenchArgs, SECTIONS } from "../../src/pipeline/args.ts";

describe("bench flags", () => {
  test("defaults: 1M records, rates 1k/10k/50k, every section", () => {
    const args = parseBenchArgs([]);
    expect(args.records).toBe(1_000_000);
    expect(args.rates).toEqual([1_000, 10_000, 50_000]);
    expect(args.batchAges).toEqual([9_000, 10_000, 10_010, 10_020]);
    expect(args.sections).toEqual([...SECTIONS]);
    expect(args.rounds).toBe(3);
    expect(args.json).toBe(false);
  });

  test("--quick shrinks the defaults, explicit flags still win", () => {
    const quick = parseBenchArgs(["--quick"]);
    expect(quick.records).toBe(200_000);
    expect(quick.seconds).toBe(20);
    expect(quick.rounds).toBe(1);
    expect(parseBenchArgs(["--quick", "--rounds", "5"]).rounds).toBe(5);
    const mixed = parseBenchArgs(["--quick", "--records", "50k", "--rates", "2000,5_000", "--rates", "1M", "--json"]);
    expect(mixed.records).toBe(50_000);
    expect(mixed.rates).toEqual([2_000, 5_000, 1_000_000]);
    expect(mixed.json).toBe(true);
  });

  test("--only picks sections, comma separated or repeated", () => {
    expect(parseBenchArgs(["--only", "peers,agent", "--only", "e2e"]).sections).toEqual(["peers", "agent", "e2e"]);
  });

  test("bad values name the flag", () => {
    expect(thrownBy(() => parseBenchArgs(["--only", "kafka"]), BenchError).subject).toBe("only");
    expect(thrownBy(() => parseBenchArgs(["--records", "-5"]), BenchError).code).toBe("BENCH_ARGS_INVALID");
    expect(thrownBy(() => parseBenchArgs(["--rates", "1000,fast"]), BenchError).subject).toBe("rates");
    expect(thrownBy(() => parseBenchArgs(["--records", "0"]), BenchError).subject).toBe("records");
    expect(thrownBy(() => parseBenchArgs(["--rounds", "0"]), BenchError).subject).toBe("rounds");
    expect(thrownBy(() => parseBenchArgs(["--frobnicate"]), BenchError).code).toBe("BENCH_ARGS_INVALID");
  });
});
