import { describe, expect, test } from "bun:test";
import { mutatedLines } from "@svc/testkit";
import { type AuditRecord, newScanResult, parseRecordLine, recordTimeMs, SCANNED_FIELD, scanRecord } from "../index.ts";

const anyName = () => true;
const scan = (text: string) => scanRecord(Buffer.from(text), newScanResult(), anyName);
const base = (): AuditRecord => ({
  id: "scan-1",
  time: "2026-11-23T10:00:00.250Z",
  source: "endpoint",
  action: "/endpoint.v1.EndpointService/Describe",
  resource: "endpoints/e-1",
  result: "ok",
  duration_ms: 3,
  claimed_tenant_id: "tenant-a",
  principal_id: "user-1",
  tenant_id: "tenant-a",
  attributes: { note: "n", client_ip: "10.0.0.1" },
});
const valid = JSON.stringify(base());
const STRING_FIELDS = Object.keys(SCANNED_FIELD) as (keyof typeof SCANNED_FIELD)[];

/** Each string field of an accepted line, as located by the scan. */
function located(bytes: Buffer): Record<string, string> | undefined {
  const result = newScanResult();
  if (!scanRecord(bytes, result, anyName)) return undefined;
  const fields: Record<string, string> = {};
  for (const name of STRING_FIELDS) {
    const f = SCANNED_FIELD[name];
    fields[name] = bytes.toString("latin1", result.start[f], result.end[f]);
  }
  return fields;
}

describe("scanRecord", () => {
  test("accepts a plain record and locates every string field", () => {
    const { duration_ms: _, attributes: __, ...strings } = base();
    expect(located(Buffer.from(valid))).toEqual(strings);
    const other = { ...base(), tenant_id: "", principal_id: "", resource: "", claimed_tenant_id: "t-9" };
    const { duration_ms: ___, attributes: ____, ...otherStrings } = other;
    // Any field order, and empty values located as empty ranges.
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(other).reverse()));
    expect(located(Buffer.from(reordered))).toEqual(otherStrings);
  });

  test("accepts JSON whitespace, a record without attributes, empty attributes, plain decimals", () => {
    const { attributes: _, ...bare } = base();
    expect(scan(JSON.stringify(bare))).toBe(true);
    expect(scan(JSON.stringify({ ...base(), attributes: {} }))).toBe(true);
    expect(scan(JSON.stringify(base(), null, 2).replaceAll("\n", "\r"))).toBe(true);
    expect(scan(` \t${valid} `)).toBe(true);
    for (const d of ["0", "12", "0.25", "1234.5"])
      expect(scan(valid.replace(/"duration_ms":[^,]+/, `"duration_ms":${d}`))).toBe(true);
  });

  // Refused here; the slow path then decides (some of these are valid records, most are not).
  const refused: [string, string][] = [
    ["an escape in a string", valid.replace('"n"', '"a\\"b"')],
    ["a non-ASCII character", valid.replace('"n"', '"é"')],
    ["a control character in a string", valid.replace('"n"', '"a\tb"')],
    ["an exponent", valid.replace(/"duration_ms":[^,]+/, '"duration_ms":1e3')],
    ["a negative duration", valid.replace(/"duration_ms":[^,]+/, '"duration_ms":-1')],
    ["a leading zero", valid.replace(/"duration_ms":[^,]+/, '"duration_ms":01')],
    ["a bare dot", valid.replace(/"duration_ms":[^,]+/, '"duration_ms":1.')],
    ["a string duration", valid.replace(/"duration_ms":[^,]+/, '"duration_ms":"1"')],
    ["a duplicate field", valid.replace('{"id":"scan-1"', '{"id":"scan-1","id":"scan-2"')],
    ["an unknown field", valid.replace('{"id"', '{"x":"y","id"')],
    ["a missing field", valid.replace(/"result":"ok",/, "")],
    ["an empty id", valid.replace('"id":"scan-1"', '"id":""')],
    ["a long id", valid.replace('"id":"scan-1"', `"id":"${"x".repeat(129)}"`)],
    ["a long tenant", valid.replace('"tenant_id":"tenant-a"', `"tenant_id":"${"x".repeat(257)}"`)],
    ["a long attribute", valid.replace('"n"', `"${"x".repeat(4097)}"`)],
    ["a numeric attribute", valid.replace('"n"', "1")],
    ["a nested attribute", valid.replace('"n"', '{"a":"b"}')],
    ["null attributes", valid.replace(/"attributes":\{[^}]*\}/, '"attributes":null')],
    ["a trailing comma", valid.replace(/\}$/, ",}")],
    ["a trailing comma in attributes", valid.replace(/"\}\}$/, '",}}')],
    ["text after the object", `${valid}x`],
    ["two objects", `${valid}${valid}`],
    ["a cut line", valid.slice(0, -1)],
    ["an array", `[${valid}]`],
    ["a missing colon", valid.replace('"source":', '"source"')],
    ["single quotes", valid.replace('"result":"ok"', "'result':'ok'")],
    ["empty", ""],
    ["an empty object", "{}"],
  ];
  for (const [name, text] of refused) test(`refuses ${name}`, () => expect(scan(text)).toBe(false));

  test("asks about every attribute name and refuses the line on a false", () => {
    const names: string[] = [];
    const ask = (b: Uint8Array, s: number, e: number) => {
      names.push(Buffer.from(b.subarray(s, e)).toString());
      return !names.at(-1)?.startsWith("client");
    };
    expect(scanRecord(Buffer.from(valid), newScanResult(), ask)).toBe(false);
    expect(names).toEqual(["note", "client_ip"]);
  });
  test("a line inside a larger buffer (from, to): the answer it gets alone, positions offset; nothing past `to` decides", () => {
    const lines = [valid, JSON.stringify({ ...base(), attributes: {} })];
    // Bytes after the line that would complete or continue a record if they were read.
    const tails = ["}", ',"x":1}', '"}', " }", '{"id":"a"}'];
    for (const [k, line] of [...mutatedLines(lines, 5_000, 29), Buffer.from(valid.slice(0, -1))].entries()) {
      const alone = newScanResult();
      const expected = scanRecord(line, alone, anyName);
      const before = Buffer.from("{}\n".repeat(k % 3));
      const embedded = Buffer.concat([before, line, Buffer.from(tails[k % tails.length] as string)]);
      const inside = newScanResult();
      expect(scanRecord(embedded, inside, anyName, before.length, before.length + line.length)).toBe(expected);
      if (expected) {
        const fields = Object.values(SCANNED_FIELD);
        expect(fields.map((f) => inside.start[f])).toEqual(
          fields.map((f) => (alone.start[f] as number) + before.length),
        );
        expect(fields.map((f) => inside.end[f])).toEqual(fields.map((f) => (alone.end[f] as number) + before.length));
      }
    }
    // The record cut before its closing brace, followed by one: refused (the brace is not the line's).
    const cut = Buffer.from(`${valid.slice(0, -1)}}`);
    expect(scanRecord(cut, newScanResult(), anyName, 0, cut.length - 1)).toBe(false);
  });

  test("20,000 mutated lines: never accepts what the schema refuses; the fields located are the parsed ones", () => {
    const lines = [valid, JSON.stringify({ ...base(), tenant_id: "" }), JSON.stringify({ ...base(), resource: "" })];
    let accepted = 0;
    let refused = 0;
    let schemaValid = 0;
    for (const mutated of mutatedLines(lines, 20_000, 11)) {
      const fields = located(mutated);
      if (fields === undefined) {
        refused += 1;
        continue;
      }
      accepted += 1;
      // Accepted: JSON.parse and the schema accept it too (time's format aside: the caller checks it).
      const parsed = JSON.parse(mutated.toString("latin1")) as Record<string, unknown>;
      const expected = Object.fromEntries(STRING_FIELDS.map((name) => [name, parsed[name]]));
      expect(fields as Record<string, unknown>).toEqual(expected);
      if (recordTimeMs(parsed.time as string) !== undefined) {
        expect(() => parseRecordLine(mutated.toString("latin1"))).not.toThrow();
        schemaValid += 1;
      }
    }
    // Both kinds must occur, or the test proves nothing.
    expect(accepted).toBeGreaterThan(1_000);
    expect(refused).toBeGreaterThan(1_000);
    expect(schemaValid).toBeGreaterThan(1_000);
  });
});
