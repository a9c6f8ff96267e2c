import { describe, expect, test } from "bun:test";
import { RepeatedStrings } from "../src/repeated-strings.ts";

describe("RepeatedStrings", () => {
  test("every value decodes to its own bytes, repeated, alternating, empty or long", () => {
    const strings = new RepeatedStrings();
    const line = Buffer.from(`{"a":"user-1","b":"user-2","c":"","d":"${"x".repeat(300)}","e":"user-1"}`);
    const at = (value: string, from = 0) => {
      const start = line.indexOf(value, from);
      return [start, start + value.length] as const;
    };
    for (let round = 0; round < 3; round += 1) {
      for (const value of ["user-1", "user-2", "x".repeat(300)]) expect(strings.get(line, ...at(value))).toBe(value);
      expect(strings.get(line, 20, 20)).toBe("");
      expect(strings.get(line, ...at("user-1", line.indexOf('"e"')))).toBe("user-1");
    }
  });

  test("thousands of values, many sharing slots, each decodes exactly, however they alternate", () => {
    const strings = new RepeatedStrings();
    const values = Array.from({ length: 5_000 }, (_, i) => `user-${i}@tenant-${i % 8}`);
    for (let round = 0; round < 3; round += 1) {
      for (const value of values) expect(strings.get(Buffer.from(`"${value}"`), 1, value.length + 1)).toBe(value);
    }
  });

  test("a cached value is a copy: the source buffer reused for other bytes does not change it", () => {
    const strings = new RepeatedStrings();
    const buffer = Buffer.from("tenant-a");
    expect(strings.get(buffer, 0, 8)).toBe("tenant-a");
    buffer.write("tenant-b");
    expect(strings.get(buffer, 0, 8)).toBe("tenant-b");
    expect(strings.get(Buffer.from("tenant-a"), 0, 8)).toBe("tenant-a");
  });
});
