import { describe, expect, test } from "bun:test";
import { BatchSlabs } from "../src/batch-slabs.ts";

describe("BatchSlabs", () => {
  test("pieces come front to back from one buffer; given back, the same memory is handed out again", () => {
    const slabs = new BatchSlabs(1024, 2);
    const slab = slabs.take();
    const a = slab.alloc(100);
    const b = slab.alloc(200);
    expect(a.buffer).toBe(b.buffer);
    expect(b.byteOffset).toBe(a.byteOffset + 100);
    slabs.give(slab);
    expect(slabs.idle).toBe(1);
    const again = slabs.take();
    expect(again).toBe(slab);
    expect(again.alloc(10).byteOffset).toBe(a.byteOffset);
  });

  test("a piece larger than what is left is a buffer of its own; the slab's pieces are not overwritten", () => {
    const slabs = new BatchSlabs(256, 1);
    const slab = slabs.take();
    const first = slab.alloc(200).fill(1);
    const big = slab.alloc(100).fill(2);
    expect(big.buffer).not.toBe(first.buffer);
    expect(big.length).toBe(100);
    expect(first.every((byte) => byte === 1)).toBe(true);
  });

  test("at most `keep` slabs wait for reuse; more given back are dropped", () => {
    const slabs = new BatchSlabs(64, 1);
    const one = slabs.take();
    const two = slabs.take();
    expect(two).not.toBe(one);
    slabs.give(one);
    slabs.give(two);
    expect(slabs.idle).toBe(1);
  });
});
