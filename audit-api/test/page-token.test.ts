import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { AuditApiError, type AuditQuery, PageTokens } from "../index.ts";

const query: AuditQuery = { start: "2026-01-01T00:00:00Z", end: "2026-01-02T00:00:00Z" };
const position = { time: "2026-01-01T00:00:01.000000Z", id: "ev-1" };
const tokens = new PageTokens("a".repeat(32));

const refusal = (fn: () => unknown) => thrownBy(fn, AuditApiError);

test("a token round-trips for its tenant and query, and another key's replica with the same key reads it", () => {
  const token = tokens.encode("t1", query, position);
  expect(tokens.decode("t1", query, token)).toEqual(position);
  expect(new PageTokens("a".repeat(32)).decode("t1", query, token)).toEqual(position);
});

test("another tenant, another query, another key: refused as page_token", () => {
  const token = tokens.encode("t1", query, position);
  for (const error of [
    refusal(() => tokens.decode("t2", query, token)),
    refusal(() => tokens.decode("t1", { ...query, end: "2026-01-03T00:00:00Z" }, token)),
    refusal(() => tokens.decode("t1", { ...query, action: "x" }, token)),
    refusal(() => new PageTokens("b".repeat(32)).decode("t1", query, token)),
  ]) {
    expect(error.code).toBe("AUDIT_API_INVALID_ARGUMENT");
    expect(error.subject).toBe("page_token");
  }
});

test("an altered or malformed token is refused", () => {
  const token = tokens.encode("t1", query, position);
  const [payload, mac] = token.split(".") as [string, string];
  const forged = Buffer.from(JSON.stringify([1, "2026-01-01T00:00:00.000000Z", "ev-0", "x"])).toString("base64url");
  for (const bad of [
    `${forged}.${mac}`,
    `${payload}.${mac.slice(0, -2)}AA`,
    "garbage",
    "a.b.c",
    `${payload}.`,
    "é.é",
  ]) {
    expect(refusal(() => tokens.decode("t1", query, bad)).subject).toBe("page_token");
  }
});
