import { expect, test } from "bun:test";
import { matches } from "../src/matches.ts";

test("fields only the server has are ignored; a differing or missing desired field is a mismatch", () => {
  expect(matches({ a: 1, b: { c: "x" } }, { a: 1, id: "9", b: { c: "x", d: true } })).toBe(true);
  expect(matches({ a: 1 }, { a: 2 })).toBe(false);
  expect(matches({ a: 1 }, {})).toBe(false);
  expect(matches({ b: { c: "x" } }, { b: null })).toBe(false);
});

test("arrays must hold the same elements, in any order", () => {
  expect(matches({ r: ["a", "b"] }, { r: ["b", "a"] })).toBe(true);
  expect(matches({ r: [] }, { r: ["a"] })).toBe(false);
  expect(matches({ r: ["a", "a"] }, { r: ["a", "b"] })).toBe(false);
  expect(matches({ r: ["a"] }, { r: "a" })).toBe(false);
});
