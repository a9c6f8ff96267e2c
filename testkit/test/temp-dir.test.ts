import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../index.ts";

test("a fresh directory per call, named after its purpose; remove() deletes it with its content", async () => {
  const [a, b] = await Promise.all([tempDir("purpose"), tempDir("purpose")]);
  expect(a.path).not.toBe(b.path);
  expect(a.path).toContain("svc-purpose-");
  writeFileSync(join(a.path, "file"), "x");
  await a.remove();
  await b.remove();
  expect(existsSync(a.path)).toBe(false);
  expect(existsSync(b.path)).toBe(false);
});
