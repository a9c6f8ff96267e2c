import { expect, test } from "bun:test";
import { ReadBuffers } from "../src/read-buffers.ts";

/** Reads `text` into the pool as a file read would; returns the bytes as the reader sees them. */
function read(buffers: ReadBuffers, text: string): Buffer {
  const room = buffers.room(text.length);
  const n = room.write(text);
  buffers.filled(n);
  return room.subarray(0, n);
}

test("short reads share a buffer; a buffer is reused only once the read position past it was released", () => {
  const buffers = new ReadBuffers(16, 4, 8);
  const a = read(buffers, "aaaaaa"); // buffer 1: 6 of 16
  const b = read(buffers, "bbbbbb"); // buffer 1: 12 of 16 (the short read's rest was read into)
  expect(a.buffer).toBe(b.buffer);
  const c = read(buffers, "cccccccc"); // 4 left < 8 wanted but ≥ minRoom: only 4 fit
  expect(c.toString()).toBe("cccc");
  const d = read(buffers, "dddd"); // buffer 1 is full: buffer 2
  expect(d.buffer).not.toBe(a.buffer);
  expect(buffers.readPosition).toBe(20);
  expect(buffers.buffers).toBe(2);

  // Nothing acknowledged yet: a third buffer is allocated, the lines in buffer 1 keep their bytes.
  buffers.release(15);
  read(buffers, "eeeeeeeeeeee"); // buffer 2 has 12 left: filled
  const f = read(buffers, "ffff"); // buffer 3
  expect(buffers.buffers).toBe(3);
  expect(a.toString()).toBe("aaaaaa");

  // Buffer 1 (read positions 0–16) is acknowledged: the next fresh buffer is buffer 1 again.
  buffers.release(16);
  read(buffers, "gggggggggggg"); // buffer 3: 16 of 16
  const h = read(buffers, "hhhh");
  expect(h.buffer).toBe(a.buffer);
  expect(buffers.buffers).toBe(3);
  // The buffer being read into is never taken back, even when everything read was released.
  buffers.release(buffers.readPosition);
  expect(f.toString()).toBe("ffff");
  expect(read(buffers, "iiii").buffer).toBe(h.buffer);
});

test("at most maxFree released buffers are kept; the others are left to the collector", () => {
  const buffers = new ReadBuffers(8, 8, 1);
  for (let i = 0; i < 4; i++) read(buffers, "xxxxxxxx");
  expect(buffers.buffers).toBe(4);
  buffers.release(buffers.readPosition);
  expect(buffers.buffers).toBe(2); // the current one and one free
});

test("a full buffer holding only bytes past copiedFrom is read into again; one holding an earlier byte is not", () => {
  const buffers = new ReadBuffers(8, 8, 4);
  const a = read(buffers, "line\npar"); // buffer 1: a line and the start of a partial line (read position 5)
  buffers.copiedFrom(5);
  const b = read(buffers, "tialpart"); // buffer 1 holds the line: a fresh buffer 2
  expect(b.buffer).not.toBe(a.buffer);
  const c = read(buffers, "ialparti"); // buffer 2 holds only the partial line: read into again
  expect(c.buffer).toBe(b.buffer);
  for (let i = 0; i < 100; i++) read(buffers, "xxxxxxxx");
  expect(buffers.buffers).toBe(2);
  expect(a.subarray(0, 4).toString()).toBe("line");
  // The partial line ended: every byte read may be referenced again, so full buffers are not reused.
  buffers.copiedFrom(Number.POSITIVE_INFINITY);
  const d = read(buffers, "al\nnext\n");
  expect(d.buffer).not.toBe(c.buffer);
  expect(buffers.buffers).toBe(3);
  expect(buffers.readPosition).toBe(8 * 104);
});
