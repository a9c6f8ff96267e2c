import { describe, expect, test } from "bun:test";
import { ByteSlots } from "../src/byte-slots.ts";

const asIs = (text: string) => text;

describe("ByteSlots", () => {
  test("every range gives its own value, repeated, alternating, empty or long", () => {
    const slots = new ByteSlots<string>(4096);
    const line = Buffer.from(`{"a":"user-1","b":"user-2","c":"","d":"${"x".repeat(300)}","e":"user-1"}`);
    const at = (value: string, from = 0) => {
      const start = line.indexOf(value, from);
      return [start, start + value.length] as const;
    };
    for (let round = 0; round < 3; round += 1) {
      for (const value of ["user-1", "user-2", "x".repeat(300)])
        expect(slots.get(line, ...at(value), asIs)).toBe(value);
      expect(slots.get(line, 20, 20, asIs)).toBe("");
      expect(slots.get(line, ...at("user-1", line.indexOf('"e"')), asIs)).toBe("user-1");
    }
  });

  test("makes a value once per distinct bytes, again only after another range took its slot", () => {
    const slots = new ByteSlots<{ text: string }>(16);
    let made = 0;
    const make = (text: string) => {
      made += 1;
      return { text };
    };
    const a = Buffer.from("xx tenant-a xx");
    const first = slots.get(a, 3, 11, make);
    expect(slots.get(Buffer.from("tenant-a"), 0, 8, make)).toBe(first);
    expect(made).toBe(1);
    // Sixteen slots cannot hold 5,000 values: each still gets its own, however they alternate.
    const values = Array.from({ length: 5_000 }, (_, i) => `user-${i}@tenant-${i % 8}`);
    for (let round = 0; round < 2; round += 1) {
      for (const value of values) expect(slots.get(Buffer.from(value), 0, value.length, make).text).toBe(value);
    }
    expect(made).toBeGreaterThan(values.length);
  });

  test("a kept range is a copy: the caller's buffer reused for other bytes does not change it", () => {
    const slots = new ByteSlots<string>(64);
    const buffer = Buffer.from("tenant-a");
    expect(slots.get(buffer, 0, 8, asIs)).toBe("tenant-a");
    buffer.write("tenant-b");
    expect(slots.get(buffer, 0, 8, asIs)).toBe("tenant-b");
    expect(slots.get(Buffer.from("tenant-a"), 0, 8, asIs)).toBe("tenant-a");
  });

  test("slots must be a power of two", () => {
    expect(() => new ByteSlots<string>(100)).toThrow(RangeError);
  });
});
