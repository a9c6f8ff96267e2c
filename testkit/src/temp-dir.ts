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

/** Runs `use` with a fresh directory (`tempDir`), removed afterwards whether `use` resolved or threw. */
export async function inTempDir<T>(purpose: string, use: (path: string) => Promise<T>): Promise<T> {
  const dir = await tempDir(purpose);
  try {
    return await use(dir.path);
  } finally {
    await dir.remove();
  }
}
