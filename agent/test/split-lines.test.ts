import { expect, test } from "bun:test";
import { LineSplitter } from "../src/split-lines.ts";

type Seen = [text: string, start: number, end: number, tooLarge: boolean];

function pushAll(splitter: LineSplitter, chunks: string[]): Seen[] {
  const seen: Seen[] = [];
  let at = 0;
  for (const chunk of chunks) {
    const bytes = Buffer.from(chunk);
    const before = seen.length;
    const n = splitter.push(bytes, at, (line, start, end, tooLarge) => {
      seen.push([line.toString(), start, end, tooLarge]);
    });
    expect(n).toBe(seen.length - before);
    at += bytes.length;
  }
  return seen;
}

test("lines across chunks keep their source offsets; a partial last line is held until its newline", () => {
  const splitter = new LineSplitter(16);
  expect(pushAll(splitter, ["ab\ncd", "e", "f\n\ngh"])).toEqual([
    ["ab", 0, 3, false],
    ["cdef", 3, 8, false],
    ["", 8, 9, false],
  ]);
  expect(splitter.heldBytes).toBe(2);
  expect(splitter.heldStart).toBe(9);
  expect(splitter.flush(11)).toEqual({ bytes: Buffer.from("gh"), start: 9, end: 11, tooLarge: false });
  expect(splitter.heldStart).toBeUndefined();
});

test("a line past maxLineBytes keeps its first bytes, within a chunk and across chunks", () => {
  const splitter = new LineSplitter(4);
  expect(pushAll(splitter, ["abcdefgh\nxy", "zzzzzz", "zz\nok\n"])).toEqual([
    ["abcd", 0, 9, true],
    ["xyzz", 9, 20, true],
    ["ok", 20, 23, false],
  ]);
});

test("discard forgets the held partial line and returns every byte of it read, those past the maximum too", () => {
  const splitter = new LineSplitter(4);
  pushAll(splitter, ["ok\n", "partial-line-", "of-many-bytes"]);
  expect(splitter.heldBytes).toBe(4);
  expect(splitter.discard()).toBe(26);
  expect(splitter.heldBytes).toBe(0);
  expect(splitter.flush(100)).toBeUndefined();
});
