import { expect, test } from "bun:test";
import { TokenCache, tokenDigest } from "../index.ts";
import { fakeClock } from "./support/test-issuer.ts";

test("the key is the SHA-256 of the token, not the token", () => {
  expect(tokenDigest("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("entries are served until their expiry and never after", () => {
  const clock = fakeClock(1_000);
  const cache = new TokenCache<string>(10, clock.now);
  cache.set("a", "A", 2_000);
  expect(cache.get("a")).toBe("A");
  clock.set(1_999);
  expect(cache.get("a")).toBe("A");
  clock.set(2_000);
  expect(cache.get("a")).toBeUndefined();
  expect(cache.size).toBe(0);
  cache.set("b", "B", 1_500);
  expect(cache.size).toBe(0);
});

test("the bound is respected: the least recently used entry goes first", () => {
  const cache = new TokenCache<number>(3, () => 0);
  for (const [i, key] of ["a", "b", "c"].entries()) cache.set(key, i, 10);
  expect(cache.get("a")).toBe(0);
  cache.set("d", 3, 10);
  expect(cache.size).toBe(3);
  expect(cache.get("b")).toBeUndefined();
  expect(cache.get("a")).toBe(0);
  expect(cache.get("c")).toBe(2);
  expect(cache.get("d")).toBe(3);
  for (let i = 0; i < 100; i++) cache.set(`k${i}`, i, 10);
  expect(cache.size).toBe(3);
  cache.clear();
  expect(cache.size).toBe(0);
});

test("maxEntries 0 disables caching", () => {
  const cache = new TokenCache<number>(0, () => 0);
  cache.set("a", 1, 10);
  expect(cache.get("a")).toBeUndefined();
});

test("deleteWhere removes exactly the entries the predicate picks and says how many", () => {
  const cache = new TokenCache<{ keyId: string }>(10, () => 0);
  cache.set("a", { keyId: "k1" }, 10);
  cache.set("b", { keyId: "k2" }, 10);
  cache.set("c", { keyId: "k1" }, 10);
  expect(cache.deleteWhere((value) => value.keyId === "k1")).toBe(2);
  expect(cache.size).toBe(1);
  expect(cache.get("a")).toBeUndefined();
  expect(cache.get("b")).toEqual({ keyId: "k2" });
  expect(cache.deleteWhere(() => false)).toBe(0);
});
