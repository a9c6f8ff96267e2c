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

  test("values that share a slot (same length and sampled bytes) replace each other and stay exact", () => {
    const strings = new RepeatedStrings();
    // Same length, same first, middle and last byte: the same slot; they differ in between.
    const a = Buffer.from("a1xxxm-yyyz");
    const b = Buffer.from("a2xxxm-yyyz");
    for (let i = 0; i < 5; i += 1) {
      expect(strings.get(a, 0, a.length)).toBe("a1xxxm-yyyz");
      expect(strings.get(b, 0, b.length)).toBe("a2xxxm-yyyz");
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
