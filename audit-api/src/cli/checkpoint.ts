import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AuditCliError } from "../errors.ts";

const Filters = Type.Object(
  {
    principal_id: Type.Optional(Type.String()),
    action: Type.Optional(Type.String()),
    result: Type.Optional(Type.String()),
    resource_prefix: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * Where a `forward` stands: the window of record time being sent, the page token of its next page ("" = its first
 * page) and the count acknowledged so far. Written only after the SIEM acknowledged everything before that page.
 * `target`, `filters` and `until` bind the file to one forward: another one is refused, not resumed.
 */
export const CheckpointSchema = Type.Object({
  version: Type.Literal(1),
  target: Type.String(),
  filters: Filters,
  /** The fixed end (`--end-time`), or null when following. */
  until: Type.Union([Type.String(), Type.Null()]),
  window: Type.Object({ start_time: Type.String(), end_time: Type.String() }),
  page_token: Type.String(),
  forwarded: Type.Integer({ minimum: 0 }),
});

export type Checkpoint = Static<typeof CheckpointSchema>;
export type CheckpointFilters = Static<typeof Filters>;

/** The checkpoint at `path`, or undefined when there is none yet. */
export function readCheckpoint(path: string): Checkpoint | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw new AuditCliError("AUDIT_CLI_CHECKPOINT_INVALID", `cannot read checkpoint ${path}: ${String(error)}`, {
      subject: path,
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new AuditCliError("AUDIT_CLI_CHECKPOINT_INVALID", `checkpoint ${path} is not JSON`, {
      subject: path,
      cause: error,
    });
  }
  const first = Value.Errors(CheckpointSchema, parsed).First();
  if (first) {
    throw new AuditCliError("AUDIT_CLI_CHECKPOINT_INVALID", `checkpoint ${path}${first.path}: ${first.message}`, {
      subject: path,
    });
  }
  return parsed as Checkpoint;
}

/**
 * Replaces the checkpoint atomically and durably: a new file in the same directory, fsynced, renamed over the old
 * one, and the directory fsynced, so a kill -9 or a power cut leaves either the old or the new position.
 */
export function writeCheckpoint(path: string, checkpoint: Checkpoint): void {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(temporary, "w", 0o644);
  try {
    writeSync(fd, `${JSON.stringify(checkpoint)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  const dirFd = openSync(directory, "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
