import { describe, expect, test } from "bun:test";
import { newScanResult, parseRecordLine, scanRecord } from "@svc/audit-record";
import { mutatedLines } from "@svc/testkit";
import { classifyLine, REDACTED } from "../index.ts";
import { auditRecord } from "./support/records.ts";

const anyName = () => true;
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

describe("classifyLine's fast path agrees with the schema", () => {
  const lines = [
    valid,
    JSON.stringify({ ...base(), tenant_id: "" }),
    JSON.stringify({ ...base(), tenant_id: "", claimed_tenant_id: "" }),
    JSON.stringify({ ...base(), time: "2026-11-23T10:00:00.123456+02:00" }),
    JSON.stringify({ ...base(), time: "2026-13-45T10:00:00Z" }),
    JSON.stringify({ ...base(), time: "2026-11-23 10:00:00Z" }),
    JSON.stringify({ ...base(), time: "2026-02-30T10:00:00Z" }),
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

  test("a time on a date that does not exist is dead-lettered (PostgreSQL could not index it)", () => {
    for (const time of ["2026-02-30T10:00:00Z", "2026-02-29T10:00:00Z", "2026-04-31T10:00:00Z"]) {
      expect({ time, kind: classify(Buffer.from(JSON.stringify({ ...base(), time }))).kind }).toEqual({
        time,
        kind: "dead-letter",
      });
    }
  });

  test("20,000 mutated lines: never a record the schema refuses, keys as the slow path's", () => {
    let accepted = 0;
    let agreed = 0;
    let fast = 0;
    for (const mutated of mutatedLines(lines, 20_000, 7)) {
      const expected = reference(mutated);
      const got = classify(mutated);
      if (scanRecord(mutated, newScanResult(), anyName)) fast += 1;
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

describe("dead letters keep no secret", () => {
  test("an attribute or a field named like a secret: its value is replaced in the dead letter, the fields are named", () => {
    const line = JSON.stringify({
      ...base(),
      password: "top-level-secret",
      attributes: { note: "kept", api_key: "attr-secret-1", privateKey: "attr-secret-2" },
    });
    const verdict = classify(Buffer.from(line));
    expect(verdict).toMatchObject({ kind: "dead-letter", reason: "invalid-record" });
    if (verdict.kind !== "dead-letter") throw new Error("not dead-lettered");
    expect([...(verdict.redacted?.fields ?? [])].sort()).toEqual([
      "/attributes/api_key",
      "/attributes/privateKey",
      "/password",
    ]);
    const sent = verdict.redacted?.value.toString() ?? "";
    for (const secret of ["top-level-secret", "attr-secret-1", "attr-secret-2"]) expect(sent).not.toContain(secret);
    expect(JSON.parse(sent)).toEqual({
      ...base(),
      password: REDACTED,
      attributes: { note: "kept", api_key: REDACTED, privateKey: REDACTED },
    });
    expect(verdict.error).not.toContain("secret-");
  });

  test("at any depth, in objects and arrays; a nesting too deep to follow is replaced whole", () => {
    let deep: unknown = { password: "deep-secret" };
    for (let level = 0; level < 40; level += 1) deep = { next: deep };
    const line = JSON.stringify({
      ...base(),
      attributes: { ctx: { token: "nested-secret" } },
      actor: [{ name: "a", api_key: "array-secret" }],
      deep,
    });
    const verdict = classify(Buffer.from(line));
    if (verdict.kind !== "dead-letter") throw new Error("not dead-lettered");
    const sent = verdict.redacted?.value.toString() ?? "";
    for (const secret of ["nested-secret", "array-secret", "deep-secret"]) expect(sent).not.toContain(secret);
    expect(verdict.redacted?.fields).toContain("/attributes/ctx/token");
    expect(verdict.redacted?.fields).toContain("/actor/0/api_key");
    expect(JSON.parse(sent).attributes).toEqual({ ctx: { token: REDACTED } });
    expect(JSON.parse(sent).actor).toEqual([{ name: "a", api_key: REDACTED }]);
  });

  test("a valid record whose repeated key hides a secret's field is dead-lettered, without the hidden value", () => {
    const record = base();
    const valid = JSON.stringify(record);
    // JSON.parse keeps the last "attributes": the parse is a valid record, the bytes hold a password.
    const line = `${valid.slice(0, -1)},"attributes":${JSON.stringify(record.attributes)}}`.replace(
      '"attributes":',
      '"attributes":{"pass\\u0077ord":"hidden-secret"},"attributes":',
    );
    expect(parseRecordLine(line).attributes).toEqual(record.attributes);
    expect(line).toContain("hidden-secret");
    const verdict = classify(Buffer.from(line));
    expect(verdict).toMatchObject({ kind: "dead-letter", reason: "invalid-record" });
    if (verdict.kind !== "dead-letter") throw new Error("not dead-lettered");
    expect(verdict.error).toContain("password");
    expect(verdict.redacted?.fields).toEqual(["(repeated key) password"]);
    expect(verdict.redacted?.value.toString()).not.toContain("hidden-secret");
    expect(JSON.parse(verdict.redacted?.value.toString() ?? "")).toEqual(record);
  });

  test("an invalid record without such a name, and a line that is no JSON object, are sent as they are", () => {
    for (const text of [JSON.stringify({ ...base(), time: "yesterday" }), "[1,2]", '"text"']) {
      const verdict = classify(Buffer.from(text));
      expect(verdict).toMatchObject({ kind: "dead-letter", reason: "invalid-record" });
      expect(verdict.kind === "dead-letter" && verdict.redacted).toBeUndefined();
    }
  });
});
