import { describe, expect, test } from "bun:test";
import { parseRecordLine } from "@svc/audit-record";
import { classifyLine } from "../src/classify-line.ts";
import { type ScanResult, scanRecord } from "../src/scan-record.ts";
import { auditRecord } from "./support/records.ts";

const out = (): ScanResult => ({
  timeStart: 0,
  timeEnd: 0,
  tenantStart: 0,
  tenantEnd: 0,
  claimedStart: 0,
  claimedEnd: 0,
});
const anyName = () => true;
const scan = (text: string) => scanRecord(Buffer.from(text), out(), anyName);
const base = () => ({
  ...auditRecord("scan-1", { time: new Date("2026-11-23T10:00:00.250Z") }),
  attributes: { note: "n", client_ip: "10.0.0.1" },
});
const valid = JSON.stringify(base());
const decoder = new TextDecoder("utf-8", { fatal: true });

/** What the slow path decides: the record's key or undefined when the line is not a valid record. */
function reference(bytes: Buffer): { key: string | undefined } | undefined {
  try {
    const record = parseRecordLine(decoder.decode(bytes));
    const tenant = record.tenant_id !== "" ? record.tenant_id : record.claimed_tenant_id;
    return { key: tenant === "" ? undefined : tenant };
  } catch {
    return undefined;
  }
}

function classify(bytes: Buffer) {
  return classifyLine({ bytes, start: 0, end: bytes.length + 1, tooLarge: false });
}

describe("scanRecord", () => {
  test("accepts a plain record and locates time and tenants", () => {
    const result = out();
    const bytes = Buffer.from(valid);
    expect(scanRecord(bytes, result, anyName)).toBe(true);
    expect(bytes.toString("latin1", result.timeStart, result.timeEnd)).toBe(base().time);
    expect(bytes.toString("latin1", result.tenantStart, result.tenantEnd)).toBe("tenant-a");
    expect(bytes.toString("latin1", result.claimedStart, result.claimedEnd)).toBe("tenant-a");
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
    expect(scanRecord(Buffer.from(valid), out(), ask)).toBe(false);
    expect(names).toEqual(["note", "client_ip"]);
  });
});

describe("classifyLine's fast path agrees with the schema", () => {
  const lines = [
    valid,
    JSON.stringify({ ...base(), tenant_id: "" }),
    JSON.stringify({ ...base(), tenant_id: "", claimed_tenant_id: "" }),
    JSON.stringify({ ...base(), time: "2026-11-23T10:00:00.123456+02:00" }),
    JSON.stringify({ ...base(), time: "2026-13-45T10:00:00Z" }),
    JSON.stringify({ ...base(), time: "2026-11-23 10:00:00Z" }),
    JSON.stringify({ ...base(), attributes: { api_key: "k" } }),
    JSON.stringify({ ...base(), attributes: { privateKey: "k" } }),
    JSON.stringify({ ...base(), attributes: { max_tokens: "5" } }),
  ];

  test("cases: record or not, and the key, as the slow path says", () => {
    for (const text of lines) {
      const bytes = Buffer.from(text);
      const expected = reference(bytes);
      const got = classify(bytes);
      expect({ text, kind: got.kind }).toEqual({ text, kind: expected ? "record" : "dead-letter" });
      if (got.kind === "record" && expected) {
        expect(got.key?.toString()).toBe(expected.key as string);
      }
    }
  });

  test("20,000 mutated lines: never a record the schema refuses, keys as the slow path's", () => {
    // Deterministic: mulberry32, seeded.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
    };
    const alphabet = Buffer.from('{}[]":,.-+0123456789eE \t\\/ux"a');
    let accepted = 0;
    let agreed = 0;
    let fast = 0;
    for (let i = 0; i < 20_000; i += 1) {
      const bytes = Buffer.from(lines[random(lines.length)] as string);
      let mutated: Buffer = bytes;
      for (let m = 0, count = random(3); m < count; m += 1) {
        const at = random(mutated.length + 1);
        const op = random(3);
        const byte = random(4) === 0 ? random(256) : (alphabet[random(alphabet.length)] as number);
        if (op === 0) mutated = Buffer.concat([mutated.subarray(0, at), mutated.subarray(at + 1)]);
        else if (op === 1)
          mutated = Buffer.concat([mutated.subarray(0, at), Buffer.from([byte]), mutated.subarray(at)]);
        else if (at < mutated.length)
          mutated = Buffer.concat([mutated.subarray(0, at), Buffer.from([byte]), mutated.subarray(at + 1)]);
      }
      const expected = reference(mutated);
      const got = classify(mutated);
      if (scanRecord(mutated, out(), anyName)) fast += 1;
      if (got.kind === "record") accepted += 1;
      if (got.kind === "blank") continue;
      expect({ line: mutated.toString("latin1"), record: got.kind === "record" }).toEqual({
        line: mutated.toString("latin1"),
        record: expected !== undefined,
      });
      if (got.kind === "record" && expected) {
        expect(got.key?.toString()).toBe(expected.key as string);
        agreed += 1;
      }
    }
    // The mutations must leave both valid and invalid lines, or the test proves nothing.
    expect(accepted).toBeGreaterThan(1_000);
    expect(accepted).toBeLessThan(19_000);
    expect(agreed).toBe(accepted);
    expect(fast).toBeGreaterThan(1_000);
  });
});
