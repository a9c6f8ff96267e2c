import { expect, test } from "bun:test";
import { looksLikeSecret, MAX_ATTRIBUTES, REDACTED, sanitizeAttributes } from "../index.ts";

const jwt = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtYXBwIiwidGVuYW50X2lkIjoidDEifQ.c2lnbmF0dXJlLWJ5dGVz";
const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----";
const randomKey = (encoding: "base64" | "base64url") =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString(encoding);

test.each<[string, string]>([
  ["a JWT", jwt],
  ["a JWT inside text", `token was ${jwt} yesterday`],
  ["a Bearer value", "Bearer abcdefgh.ijkl"],
  ["a Basic credential", "basic dXNlcjpwYXNzd29yZA=="],
  ["a PEM block", pem],
  ["a PEM header alone", "-----BEGIN EC PRIVATE KEY-----"],
])("%s looks like a secret", (_, value) => {
  expect(looksLikeSecret(value)).toBe(true);
});

test("32 random bytes in base64 or base64url look like a secret (heuristic: ≥ 97 % of 200 samples)", () => {
  let caught = 0;
  for (let i = 0; i < 200; i++) if (looksLikeSecret(randomKey(i % 2 === 0 ? "base64" : "base64url"))) caught += 1;
  expect(caught).toBeGreaterThanOrEqual(194);
});

test.each([
  "/audit.v2.AuditService/list_events",
  "tenants/AcmeCorporation42/keys/PrimarySigningKey2026/versions/7",
  "projects/MyProject123/locations/europe-west1/keyRings/ProdRing/cryptoKeys/DbKey01",
  "ThisIsAVeryLongCamelCaseIdentifierWithNumbers1234567890AndMore",
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "01a207bb-3076-74ac-b653-10674e813edc",
  "svc.audit.events.v1/dt=2026-11-23/hour=09/partition=003/00000000000001234567.jsonl",
  "bearer of bad news",
])("%p does not look like a secret", (value) => {
  expect(looksLikeSecret(value)).toBe(false);
});

test("sensitive or malformed names are dropped, secret-looking values redacted, long values cut", () => {
  const result = sanitizeAttributes({
    key_id: "k-1",
    password: "hunter2",
    apiToken: "abc",
    privateKey: "x",
    "bad name": "x",
    note: jwt,
    count: 3 as unknown as string,
    long: "x".repeat(5000),
  });
  expect(result.attributes).toEqual({ key_id: "k-1", note: REDACTED, long: "x".repeat(4096) });
  expect(result.dropped).toBe(5);
  expect(result.redacted).toBe(1);
});

test(`at most ${MAX_ATTRIBUTES} attributes are kept`, () => {
  const many = Object.fromEntries(Array.from({ length: MAX_ATTRIBUTES + 5 }, (_, i) => [`a${i}`, "v"]));
  const result = sanitizeAttributes(many);
  expect(Object.keys(result.attributes ?? {})).toHaveLength(MAX_ATTRIBUTES);
  expect(result.dropped).toBe(5);
});
