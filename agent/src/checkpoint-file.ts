import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AgentError } from "./errors.ts";

/** Where shipping resumes: the file (device, inode, leading bytes) and the byte offset after the last line acked. */
export const CheckpointSchema = Type.Object(
  {
    version: Type.Literal(1),
    path: Type.String(),
    dev: Type.Integer({ minimum: 0 }),
    ino: Type.Integer({ minimum: 0 }),
    offset: Type.Integer({ minimum: 0 }),
    fingerprint: Type.Object({ length: Type.Integer({ minimum: 0 }), sha256: Type.String() }),
    /** The file's last-write time when the agent opened it (absent in checkpoints written before 2026-11-29). */
    mtimeMs: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export interface Checkpoint {
  version: 1;
  path: string;
  dev: number;
  ino: number;
  offset: number;
  fingerprint: { length: number; sha256: string };
  mtimeMs?: number;
}

/** The checkpoint at `path`, or undefined when there is none yet; throws AGENT_CHECKPOINT_UNREADABLE. */
export async function readCheckpoint(path: string): Promise<Checkpoint | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new AgentError("AGENT_CHECKPOINT_UNREADABLE", `cannot read checkpoint ${path}: ${(cause as Error).message}`, {
      subject: path,
      cause,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new AgentError("AGENT_CHECKPOINT_UNREADABLE", `checkpoint ${path} is not JSON`, { subject: path, cause });
  }
  const first = Value.Errors(CheckpointSchema, value).First();
  if (first) {
    throw new AgentError("AGENT_CHECKPOINT_UNREADABLE", `checkpoint ${path}: ${first.path}: ${first.message}`, {
      subject: path,
    });
  }
  return value as Checkpoint;
}

/**
 * Writes the checkpoint atomically: a temporary file in the same directory, fsync, rename over the old one, fsync
 * of the directory. A reader sees the old checkpoint or the new one, never a mix. Throws
 * AGENT_CHECKPOINT_WRITE_FAILED (retriable: the directory may come back).
 */
export async function writeCheckpoint(path: string, checkpoint: Checkpoint): Promise<void> {
  const temp = `${path}.tmp-${process.pid}`;
  try {
    const handle = await open(temp, "w", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(checkpoint)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
    const directory = await open(dirname(path), "r");
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  } catch (cause) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw new AgentError(
      "AGENT_CHECKPOINT_WRITE_FAILED",
      `cannot write checkpoint ${path}: ${(cause as Error).message}`,
      { subject: path, canRetry: true, cause },
    );
  }
}

/** Creates the checkpoint's directory at start (later, a missing directory is a write failure, not re-created). */
export async function prepareCheckpointDirectory(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
}
