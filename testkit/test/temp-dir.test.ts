import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inTempDir, tempDir } from "../index.ts";

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

test("inTempDir: the body's result, and its directory removed whether it resolved or threw", async () => {
  let kept = "";
  const result = await inTempDir("purpose", async (path) => {
    kept = path;
    writeFileSync(join(path, "file"), "x");
    return 42;
  });
  expect(result).toBe(42);
  expect(existsSync(kept)).toBe(false);

  let thrownIn = "";
  const failing = inTempDir("purpose", async (path) => {
    thrownIn = path;
    throw new Error("body failed");
  });
  await expect(failing).rejects.toThrow("body failed");
  expect(thrownIn).not.toBe("");
  expect(existsSync(thrownIn)).toBe(false);
});
