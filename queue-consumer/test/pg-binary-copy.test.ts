import { describe, expect, test } from "bun:test";
import { seededRandom } from "@svc/testkit";
import { ARRAY_OF, BinaryCopyRows, releaseCopyPayload } from "../src/pg-binary-copy.ts";

const HEADER = Buffer.concat([Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)]);
const TRAILER = Buffer.from([0xff, 0xff]);

/** An int8 field as PostgreSQL reads it: length 8, then the value in network byte order. */
function int8Field(value: bigint): Buffer {
  const field = Buffer.alloc(12);
  field.writeInt32BE(8, 0);
  field.writeBigInt64BE(value, 4);
  return field;
}

describe("BinaryCopyRows", () => {
  test("no rows: the signature, two zero words and the end marker", () => {
    expect(new BinaryCopyRows().end()).toEqual(Buffer.concat([HEADER, TRAILER]));
  });

  test("a row: its field count, then each field's length and bytes (UTF-8 text, big-endian integers)", () => {
    const rows = new BinaryCopyRows();
    rows.row(4);
    rows.text("é世😀");
    rows.int32(-2);
    rows.bigint64(258n);
    rows.text("");
    const text = Buffer.from("é世😀", "utf8");
    expect(rows.end()).toEqual(
      Buffer.concat([
        HEADER,
        Buffer.from([0, 4]),
        Buffer.from([0, 0, 0, text.length]),
        text,
        Buffer.from([0, 0, 0, 4, 0xff, 0xff, 0xff, 0xfe]),
        int8Field(258n),
        Buffer.from([0, 0, 0, 0]),
        TRAILER,
      ]),
    );
  });

  test("textBytes: a range of bytes as a text field, short or long, at the position it returns", () => {
    const source = Buffer.from(`xx${"a".repeat(10)}yy${"b".repeat(200)}zz`);
    const byBytes = new BinaryCopyRows(16); // grown on the way
    byBytes.row(2);
    const shortAt = byBytes.textBytes(source, 2, 12);
    const longAt = byBytes.textBytes(source, 14, 214);
    const payload = byBytes.end();
    const byText = new BinaryCopyRows();
    byText.row(2);
    byText.text("a".repeat(10));
    byText.text("b".repeat(200));
    expect(payload).toEqual(byText.end());
    expect(payload.subarray(shortAt, shortAt + 10).toString()).toBe("a".repeat(10));
    expect(payload.subarray(longAt, longAt + 200).toString()).toBe("b".repeat(200));
  });

  test("a released payload is freed: empty, its buffer detached; releasing it again does nothing", () => {
    const rows = new BinaryCopyRows();
    rows.row(1);
    rows.text("x");
    const payload = rows.end();
    releaseCopyPayload(payload);
    expect([payload.length, (payload.buffer as ArrayBuffer).detached]).toEqual([0, true]);
    releaseCopyPayload(payload);
    expect(payload.length).toBe(0);
  });

  test("int64 writes every safe integer as its 64-bit two's complement", () => {
    const values = [0, 1, -1, 2 ** 32 - 1, 2 ** 32, -(2 ** 32), -(2 ** 32) - 1, 2 ** 53 - 1, -(2 ** 53 - 1)];
    const next = seededRandom(20261126);
    for (let i = 0; i < 1000; i += 1) values.push(Math.round((next() * 2 - 1) * Number.MAX_SAFE_INTEGER));
    for (const value of values) {
      const rows = new BinaryCopyRows();
      rows.int64(value);
      expect(rows.end().subarray(HEADER.length, -2)).toEqual(int8Field(BigInt(value)));
    }
  });

  test("int64 refuses a number that is not a safe integer (it would be written wrong)", () => {
    for (const value of [2 ** 53, -(2 ** 53), 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new BinaryCopyRows().int64(value)).toThrow(RangeError);
    }
  });

  test("the buffer grows past the expected size, keeping what was written", () => {
    const rows = new BinaryCopyRows(1);
    const long = "x".repeat(10_000);
    for (let i = 0; i < 5; i += 1) {
      rows.row(2);
      rows.text(long);
      rows.int32(i);
    }
    const payload = rows.end();
    const row = Buffer.concat([Buffer.from([0, 2, 0, 0, 0x27, 0x10]), Buffer.from(long)]);
    const expected = [HEADER];
    for (let i = 0; i < 5; i += 1) expected.push(row, Buffer.from([0, 0, 0, 4, 0, 0, 0, i]));
    expect(payload).toEqual(Buffer.concat([...expected, TRAILER]));
  });

  test("text that turns non-ASCII after an ASCII start is its UTF-8 (not the bytes copied before)", () => {
    for (const value of ["abcé", "tenants/a/keys/ключ", "x😀", "ascii only", "\u007f\u0080"]) {
      const rows = new BinaryCopyRows();
      rows.text(value);
      rows.int32(7);
      const utf8 = Buffer.from(value, "utf8");
      const length = Buffer.alloc(4);
      length.writeInt32BE(utf8.length);
      expect(rows.end().subarray(HEADER.length, -2)).toEqual(
        Buffer.concat([length, utf8, Buffer.from([0, 0, 0, 4, 0, 0, 0, 7])]),
      );
    }
  });

  test("a lone surrogate is written as U+FFFD, so PostgreSQL never receives invalid UTF-8", () => {
    const rows = new BinaryCopyRows();
    rows.text("a\uD800b");
    expect(rows.end().subarray(HEADER.length, -2)).toEqual(
      Buffer.concat([Buffer.from([0, 0, 0, 5]), Buffer.from("a\uFFFDb", "utf8")]),
    );
  });

  test("arrays: array_send's header (1 dimension, no NULLs, element type, length, lower bound 1), then the elements", () => {
    const rows = new BinaryCopyRows(1);
    const array = (oid: number, elements: readonly (number | string)[]) => {
      const lengthAt = rows.arrayStart(elements.length, oid);
      for (const element of elements) {
        if (typeof element === "number") rows.int64(element);
        else rows.text(element);
      }
      rows.arrayEnd(lengthAt);
    };
    array(ARRAY_OF.timestamptz, [1, -(2 ** 40)]);
    array(ARRAY_OF.text, ["a", "é", ""]);
    array(ARRAY_OF.text, []);
    const header = (oid: number, length: number, bytes: number) => {
      const out = Buffer.alloc(24);
      out.writeInt32BE(bytes, 0);
      out.writeInt32BE(1, 4);
      out.writeInt32BE(0, 8);
      out.writeInt32BE(oid, 12);
      out.writeInt32BE(length, 16);
      out.writeInt32BE(1, 20);
      return out;
    };
    expect(rows.end().subarray(HEADER.length, -2)).toEqual(
      Buffer.concat([
        header(1184, 2, 20 + 24),
        int8Field(1n),
        int8Field(-(2n ** 40n)),
        header(25, 3, 20 + 5 + 6 + 4),
        Buffer.from([0, 0, 0, 1, 0x61, 0, 0, 0, 2, 0xc3, 0xa9, 0, 0, 0, 0]),
        header(25, 0, 20),
      ]),
    );
  });
});
