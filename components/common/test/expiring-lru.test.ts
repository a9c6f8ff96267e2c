import { describe, expect, test } from "bun:test";
import { ExpiringLru } from "../index.ts";

describe("ExpiringLru", () => {
  test("an entry is served until its expiry and never after; an entry set already expired is not kept", () => {
    let now = 1_000;
    const lru = new ExpiringLru<string>({ maxEntries: 10, now: () => now });
    lru.set("a", "A", 2_000);
    expect(lru.get("a")).toBe("A");
    now = 1_999;
    expect(lru.get("a")).toBe("A");
    now = 2_000;
    expect(lru.get("a")).toBeUndefined();
    expect(lru.size).toBe(0);
    lru.set("b", "B", 1_500);
    expect(lru.size).toBe(0);
    expect(lru.get("b")).toBeUndefined();
  });

  test("ttlMs is the expiry of an entry set without one; an explicit expiry wins", () => {
    let now = 0;
    const lru = new ExpiringLru<string>({ maxEntries: 10, ttlMs: 100, now: () => now });
    lru.set("a", "A");
    lru.set("b", "B", 500);
    now = 99;
    expect(lru.get("a")).toBe("A");
    now = 100;
    expect(lru.get("a")).toBeUndefined();
    expect(lru.get("b")).toBe("B");
    // Setting again renews the expiry.
    lru.set("a", "A2");
    now = 199;
    expect(lru.get("a")).toBe("A2");
  });

  test("a set with no expiry on a cache without ttlMs is refused", () => {
    const lru = new ExpiringLru<string>({ maxEntries: 10 });
    expect(() => lru.set("a", "A")).toThrow(RangeError);
    expect(lru.size).toBe(0);
  });

  test("a read makes an entry the most recent: at capacity the least recently read or set one goes", () => {
    const lru = new ExpiringLru<number>({ maxEntries: 3, now: () => 0 });
    for (const [i, key] of ["a", "b", "c"].entries()) lru.set(key, i, 10);
    expect(lru.get("a")).toBe(0);
    lru.set("d", 3, 10);
    expect(lru.size).toBe(3);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe(0);
    expect(lru.get("c")).toBe(2);
    expect(lru.get("d")).toBe(3);
    // Setting an existing key makes it the most recent too (and does not grow the cache).
    lru.set("a", 10, 10);
    lru.set("e", 4, 10);
    expect(lru.get("c")).toBeUndefined();
    expect(lru.get("a")).toBe(10);
    for (let i = 0; i < 100; i++) lru.set(`k${i}`, i, 10);
    expect(lru.size).toBe(3);
    expect(lru.get("k99")).toBe(99);
    expect(lru.get("k96")).toBeUndefined();
    lru.clear();
    expect(lru.size).toBe(0);
  });

  test("the ttl variant drops the least recently used entry when full and expired entries when read", () => {
    let now = 0;
    const lru = new ExpiringLru<string>({ maxEntries: 2, ttlMs: 100, now: () => now });
    lru.set("a", "A");
    lru.set("b", "B");
    expect(lru.get("a")).toBe("A"); // a is now the most recent
    lru.set("c", "C");
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe("A");
    expect(lru.size).toBe(2);
    now = 100;
    expect(lru.get("a")).toBeUndefined();
    expect(lru.size).toBe(1);
  });

  test("maxEntries 0 disables the cache", () => {
    const lru = new ExpiringLru<number>({ maxEntries: 0, ttlMs: 100, now: () => 0 });
    lru.set("a", 1, 10);
    lru.set("b", 2);
    expect(lru.get("a")).toBeUndefined();
    expect(lru.get("b")).toBeUndefined();
    expect(lru.size).toBe(0);
  });

  test("a negative or NaN capacity and a ttl that is not > 0 are refused", () => {
    expect(() => new ExpiringLru({ maxEntries: -1 })).toThrow(RangeError);
    expect(() => new ExpiringLru({ maxEntries: Number.NaN })).toThrow(RangeError);
    expect(() => new ExpiringLru({ maxEntries: 1, ttlMs: 0 })).toThrow(RangeError);
    expect(() => new ExpiringLru({ maxEntries: 1, ttlMs: Number.NaN })).toThrow(RangeError);
  });

  test("delete with a value leaves a newer entry alone", () => {
    const lru = new ExpiringLru<string>({ maxEntries: 4, ttlMs: 1_000 });
    lru.set("k", "old");
    lru.set("k", "new");
    lru.delete("k", "old");
    expect(lru.get("k")).toBe("new");
    lru.delete("k", "new");
    expect(lru.get("k")).toBeUndefined();
    lru.set("k", "again");
    lru.delete("k");
    expect(lru.get("k")).toBeUndefined();
    expect(lru.size).toBe(0);
  });

  test("deleteWhere removes exactly the entries the predicate picks and says how many", () => {
    const lru = new ExpiringLru<{ keyId: string }>({ maxEntries: 10, now: () => 0 });
    lru.set("a", { keyId: "k1" }, 10);
    lru.set("b", { keyId: "k2" }, 10);
    lru.set("c", { keyId: "k1" }, 10);
    expect(lru.deleteWhere((value) => value.keyId === "k1")).toBe(2);
    expect(lru.size).toBe(1);
    expect(lru.get("a")).toBeUndefined();
    expect(lru.get("c")).toBeUndefined();
    expect(lru.get("b")).toEqual({ keyId: "k2" });
    expect(lru.deleteWhere(() => false)).toBe(0);
    expect(lru.size).toBe(1);
  });
});
