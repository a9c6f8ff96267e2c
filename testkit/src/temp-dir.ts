import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDir {
  path: string;
  /** Deletes the directory and everything in it. */
  remove(): Promise<void>;
}

/** A fresh directory under the OS temp dir (`svc-<purpose>-XXXXXX`); call `remove()` in the test's afterAll. */
export async function tempDir(purpose: string): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), `svc-${purpose}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
