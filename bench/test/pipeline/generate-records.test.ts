import { describe, expect, test } from "bun:test";
import { parseRecordLine } from "@svc/audit-record";
import {
  idOfLine,
  makeRecord,
  RECORD_BYTES,
  recordLine,
  recordLines,
  TENANTS,
} from "../../src/pipeline/generate-records.ts";

describe("generated records", () => {
  test("are valid audit records of about 400 bytes", () => {
    const now = Date.UTC(2026, 10, 23, 9, 0, 0, 123);
    const sizes = new Map<number, number>();
    for (let seq = 0; seq < 5_000; seq++) {
      const line = recordLine("bench-0a1b2c", seq, now + seq);
      expect(line.endsWith("\n")).toBe(true);
      const record = parseRecordLine(line.slice(0, -1));
      expect(record.time).toBe(new Date(now + seq).toISOString());
      const size = Buffer.byteLength(line) - 1;
      sizes.set(size, (sizes.get(size) ?? 0) + 1);
      expect(size).toBeGreaterThan(RECORD_BYTES - 12);
      expect(size).toBeLessThanOrEqual(RECORD_BYTES);
    }
    expect(sizes.get(RECORD_BYTES) ?? 0).toBeGreaterThan(4_000);
  });

  test("have unique ids that sort by time, then by sequence", () => {
    const t = Date.UTC(2026, 10, 23);
    const ids = [
      makeRecord("r", 5, t).id,
      makeRecord("r", 6, t).id,
      makeRecord("r", 10_000, t).id,
      makeRecord("r", 0, t + 1).id,
      makeRecord("r", 1, t + 1_000_000).id,
    ];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("vary the tenant over a few tenants, and key fields agree with it", () => {
    const seen = new Set<string>();
    for (let seq = 0; seq < 64; seq++) {
      const record = makeRecord("r", seq, 0);
      seen.add(record.tenant_id);
      expect(record.claimed_tenant_id).toBe(record.tenant_id);
      expect(record.principal_id.endsWith(`@${record.tenant_id}`)).toBe(true);
    }
    expect(seen).toEqual(new Set(TENANTS));
  });

  test("a principal count other than the workload's: principal seq mod that count, the line still padded to size", () => {
    const line = recordLine("r", 40_123, 0, RECORD_BYTES, 100_000);
    const record = parseRecordLine(line.slice(0, -1));
    expect(record.principal_id).toBe(`user-40123@${record.tenant_id}`);
    expect(Buffer.byteLength(line) - 1).toBe(RECORD_BYTES);
    expect(makeRecord("r", 40_123, 0).principal_id).toBe(`user-${40_123 % 31}@${record.tenant_id}`);
  });

  test("recordLines writes consecutive sequences and idOfLine reads the id back", () => {
    const text = recordLines("run", 7, 3, 1_700_000_000_000);
    const lines = text.split("\n").filter((l) => l !== "");
    expect(lines.length).toBe(3);
    expect(lines.map((l) => idOfLine(l))).toEqual([7, 8, 9].map((seq) => makeRecord("run", seq, 1_700_000_000_000).id));
    expect(idOfLine("not a record")).toBeUndefined();
  });
});
