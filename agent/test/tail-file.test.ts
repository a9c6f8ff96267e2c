import { afterEach, expect, test } from "bun:test";
import {
  appendFileSync,
  copyFileSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  watch,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { type TempDir, tempDir, waitFor } from "@svc/testkit";
import pino from "pino";
import type { Checkpoint } from "../src/checkpoint-file.ts";
import type { SourceEvent } from "../src/line-source.ts";
import { ReadBuffers } from "../src/read-buffers.ts";
import { FINGERPRINT_BYTES, fingerprintOf } from "../src/source-file.ts";
import { TailFile } from "../src/tail-file.ts";

const dirs: TempDir[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => dir.remove()));
});

const line = (prefix: string, n: number) => `${prefix}-${String(n).padStart(6, "0")}\n`;
const lines = (prefix: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => line(prefix, from + i)).join("");

/** Reads events until `stop` says so, collecting the text of data events. */
async function readUntil(
  tail: TailFile,
  stop: (event: SourceEvent) => boolean,
): Promise<{ text: string; last: SourceEvent }> {
  let text = "";
  for (let events = 0; events < 1_000; events++) {
    const event = await tail.next(4096);
    if (event.kind === "data") text += event.bytes.toString();
    if (stop(event)) return { text, last: event };
  }
  throw new Error(`no awaited event in 1,000 reads; read so far: ${JSON.stringify(text.slice(-200))}`);
}

/** `<a fresh temporary directory>/audit.jsonl` (the directory is removed after the test). */
async function sourcePath(purpose: string): Promise<string> {
  const dir = await tempDir(purpose);
  dirs.push(dir);
  return join(dir.path, "audit.jsonl");
}

/** Opens a tail of `path` (resuming at `checkpoint`), reads until it is idle and closes it: the text read. */
async function readToIdle(path: string, checkpoint: Checkpoint | undefined, options = plainOptions()): Promise<string> {
  const tail = await TailFile.open(path, checkpoint, options);
  try {
    return (await readUntil(tail, (event) => event.kind === "idle")).text;
  } finally {
    await tail.close();
  }
}

test("copytruncate refilled past the read position between two reads: the rest comes from the copy, nothing of the new file is taken for it", async () => {
  const path = await sourcePath("agent-tail-file");
  writeFileSync(path, lines("old", 0, 100));
  // Read again at once, before the file's end: only the check after each read can notice the truncation.
  const tail = await TailFile.open(path, undefined, {
    rotateGraceMs: 0,
    log: pino({ level: "silent" }),
    // Nothing is released here: every read keeps its bytes (the test reads them as text at once anyway).
    buffers: new ReadBuffers(64 * 1024, 4096, 0),
  });
  try {
    const first = await tail.next(line("old", 0).length * 10);
    expect(first.kind).toBe("data");
    const readSoFar = first.kind === "data" ? first.bytes.toString() : "";
    // The writer goes on, the file is copied and truncated, and the writer refills it past our position at once.
    appendFileSync(path, lines("old", 100, 100));
    copyFileSync(path, `${path}.1`);
    truncateSync(path, 0);
    appendFileSync(path, lines("new", 0, 300));

    const fromCopy = await readUntil(tail, (event) => event.kind === "switched");
    expect(fromCopy.last).toMatchObject({ kind: "switched", reason: "copytruncate" });
    const fromNew = await readUntil(tail, (event) => event.kind === "idle");
    expect(readSoFar + fromCopy.text).toBe(lines("old", 0, 200));
    expect(fromNew.text).toBe(lines("new", 0, 300));
  } finally {
    // Closed explicitly: a handle left to the garbage collector fails whatever test runs when it is collected.
    await tail.close();
  }
});

test("onChange: appends, a rotation by rename and the new file's create are reported; close ends the watch", async () => {
  const dir = await tempDir("agent-tail-watch");
  dirs.push(dir);
  const path = join(dir.path, "audit.jsonl");
  writeFileSync(path, lines("a", 0, 1));
  let changes = 0;
  const tail = await TailFile.open(path, undefined, {
    rotateGraceMs: 0,
    log: pino({ level: "silent" }),
    buffers: new ReadBuffers(64 * 1024, 4096, 0),
    onChange: () => changes++,
  });
  const changed = async (what: () => void) => {
    const before = changes;
    what();
    await waitFor("a change reported", async () => (changes !== before ? true : undefined), {
      timeoutMs: 5_000,
      intervalMs: 5,
    });
  };
  try {
    await readUntil(tail, (event) => event.kind === "idle");
    await changed(() => appendFileSync(path, lines("a", 1, 1)));
    await changed(() => renameSync(path, `${path}.1`));
    await changed(() => writeFileSync(path, lines("b", 0, 1)));
    // Another file in the directory is not the source: no report for it.
    const before = changes;
    writeFileSync(join(dir.path, "other.log"), "x\n");
    await changed(() => appendFileSync(path, lines("b", 1, 1)));
    expect(changes).toBeGreaterThan(before);
  } finally {
    await tail.close();
  }
  const closedAt = changes;
  // The watch is closed: wait for a change of a watch of our own to know the event was delivered, then compare.
  let seen = false;
  const probe = watch(dir.path, () => {
    seen = true;
  });
  try {
    appendFileSync(path, lines("b", 3, 1));
    await waitFor("our own watch's event", async () => (seen ? true : undefined), { timeoutMs: 5_000, intervalMs: 5 });
    expect(changes).toBe(closedAt);
  } finally {
    probe.close();
  }
});

test("onChange on a path whose directory does not exist: the tail opens (polling only) and says so in its log", async () => {
  const dir = await tempDir("agent-tail-nowatch");
  dirs.push(dir);
  const warnings: string[] = [];
  const log = pino({ level: "warn" }, { write: (line: string) => warnings.push(line) });
  const tail = await TailFile.open(join(dir.path, "missing", "audit.jsonl"), undefined, {
    rotateGraceMs: 0,
    log,
    buffers: new ReadBuffers(64 * 1024, 4096, 0),
    onChange: () => {},
  });
  try {
    expect((await tail.next(4096)).kind).toBe("idle");
    expect(warnings.some((line) => line.includes("file watch not available"))).toBe(true);
  } finally {
    await tail.close();
  }
});

/** Options for a tail read by the test alone (nothing released: every read keeps its bytes). */
const plainOptions = () => ({
  rotateGraceMs: 0,
  log: pino({ level: "silent" }),
  buffers: new ReadBuffers(256 * 1024, 4096, 0),
});

/**
 * logrotate's numbered scheme run twice while the reader is behind: the file being read goes to `.1` and then `.2`,
 * the generation written between the two rotations ("g") to `.1`, and a third ("h") is at the path.
 */
function rotateTwice(path: string): void {
  renameSync(path, `${path}.1`);
  writeFileSync(path, lines("g", 0, 40));
  renameSync(`${path}.1`, `${path}.2`);
  renameSync(path, `${path}.1`);
  writeFileSync(path, lines("h", 0, 30));
}

/** A checkpoint at `offset` of the file now at `path` (its time as the agent records it when it opens the file). */
function checkpointOf(path: string, offset: number): Checkpoint {
  const info = statSync(path);
  const head = readFileSync(path).subarray(0, Math.min(offset, FINGERPRINT_BYTES));
  return {
    version: 1,
    path,
    dev: info.dev,
    ino: info.ino,
    offset,
    fingerprint: fingerprintOf(head),
    mtimeMs: info.mtimeMs,
  };
}

test("two rotations while the reader is behind: the generation rotated away between them is read before the path", async () => {
  const path = await sourcePath("agent-tail-two-rotations");
  writeFileSync(path, lines("f", 0, 100));
  const tail = await TailFile.open(path, undefined, plainOptions());
  try {
    const first = await tail.next(line("f", 0).length * 10);
    const readSoFar = first.kind === "data" ? first.bytes.toString() : "";
    rotateTwice(path);
    // Still to read (svc_agent_bytes_behind): the rest of the file being read, the generation rotated after it, the
    // file at the path.
    expect(tail.bytesUnread()).toBe(
      Buffer.byteLength(lines("f", 0, 100)) -
        readSoFar.length +
        Buffer.byteLength(lines("g", 0, 40) + lines("h", 0, 30)),
    );
    // The names decide, not the times: a late write to the file being read (now .2) after .1 was last written.
    const later = new Date(Date.now() + 60_000);
    utimesSync(`${path}.2`, later, later);
    const switches: SourceEvent[] = [];
    const { text } = await readUntil(tail, (event) => {
      if (event.kind === "switched") switches.push(event);
      return event.kind === "idle";
    });
    expect(readSoFar + text).toBe(lines("f", 0, 100) + lines("g", 0, 40) + lines("h", 0, 30));
    expect(switches.map((event) => event.kind === "switched" && event.reason)).toEqual(["rename", "rename"]);
    expect(tail.bytesUnread()).toBe(0);
  } finally {
    await tail.close();
  }
});

/** logrotate's copytruncate: the path's bytes copied to `.1` (an older `.1` renamed to `.2`, or deleted with `rotate 1`), the path truncated. */
function copyTruncate(path: string, older: "renamed" | "deleted"): void {
  if (older === "renamed") renameSync(`${path}.1`, `${path}.2`);
  else rmSync(`${path}.1`);
  copyFileSync(path, `${path}.1`);
  truncateSync(path, 0);
}

/**
 * `count` lines of `prefix` at `path`, a tail that has read the first 10 of them, then copytruncate (the copy at
 * `.1`): the tail and the text it read.
 */
async function readTenThenCopyTruncate(path: string, prefix: string, count: number) {
  writeFileSync(path, lines(prefix, 0, count));
  const tail = await TailFile.open(path, undefined, plainOptions());
  const first = await tail.next(line(prefix, 0).length * 10);
  const readSoFar = first.kind === "data" ? first.bytes.toString() : "";
  copyFileSync(path, `${path}.1`);
  truncateSync(path, 0);
  return { tail, readSoFar };
}

test.each(["renamed", "deleted"] as const)(
  "copytruncate again while the first copy is read (the older copy %s): the generation between them is read from its copy, then the path",
  async (older) => {
    const path = await sourcePath("agent-tail-copytruncate-twice");
    const { tail, readSoFar } = await readTenThenCopyTruncate(path, "a", 100);
    try {
      appendFileSync(path, lines("b", 0, 40));
      const copied = await tail.next(4096);
      expect(copied).toMatchObject({ kind: "copied", copy: `${path}.1`, position: readSoFar.length });
      const fromCopy = await tail.next(line("a", 0).length * 10);
      const copyText = fromCopy.kind === "data" ? fromCopy.bytes.toString() : "";
      // The agent is still in the first copy when the rotator runs again: generation "b" leaves the path for `.1`.
      copyTruncate(path, older);
      appendFileSync(path, lines("c", 0, 30));
      const switches: SourceEvent[] = [];
      const { text } = await readUntil(tail, (event) => {
        if (event.kind === "switched") switches.push(event);
        return event.kind === "idle";
      });
      expect(readSoFar + copyText + text).toBe(lines("a", 0, 100) + lines("b", 0, 40) + lines("c", 0, 30));
      expect(switches).toMatchObject([
        { kind: "switched", reason: "copytruncate", generation: `${path}.1` },
        { kind: "switched", reason: "copytruncate" },
      ]);
      expect(switches[1]).not.toHaveProperty("generation");
      expect(tail.bytesUnread()).toBe(0);
    } finally {
      await tail.close();
    }
  },
);

test("copies named by hand in the other order (.1, then .2): the older copy, already read, is not read again after the newer", async () => {
  const path = await sourcePath("agent-tail-copies-by-hand");
  const { tail, readSoFar } = await readTenThenCopyTruncate(path, "a", 50);
  try {
    // The first copy was made a minute before the second (a clock tick apart would do).
    const earlier = new Date(Date.now() - 60_000);
    utimesSync(`${path}.1`, earlier, earlier);
    appendFileSync(path, lines("b", 0, 40));
    const untilSecond = await readUntil(tail, (event) => event.kind === "data" && event.bytes.includes("b-000039"));
    copyFileSync(path, `${path}.2`);
    truncateSync(path, 0);
    appendFileSync(path, lines("c", 0, 30));
    const { text } = await readUntil(tail, (event) => event.kind === "idle");
    expect(readSoFar + untilSecond.text + text).toBe(lines("a", 0, 50) + lines("b", 0, 40) + lines("c", 0, 30));
  } finally {
    await tail.close();
  }
});

test("a restart after copytruncate twice with the checkpoint in the first copy (now .2): its rest, the copy at .1, then the path", async () => {
  const path = await sourcePath("agent-tail-restart-copytruncate-twice");
  writeFileSync(path, lines("a", 0, 100));
  copyFileSync(path, `${path}.1`);
  truncateSync(path, 0);
  const checkpoint = checkpointOf(`${path}.1`, line("a", 0).length * 10);
  appendFileSync(path, lines("b", 0, 40));
  copyTruncate(path, "renamed");
  appendFileSync(path, lines("c", 0, 30));
  const text = await readToIdle(path, { ...checkpoint, path });
  expect(text).toBe(lines("a", 10, 90) + lines("b", 0, 40) + lines("c", 0, 30));
});

test("a restart after two rotations: the checkpoint's file (now .2), then the generation at .1, then the path", async () => {
  const path = await sourcePath("agent-tail-restart-rotations");
  writeFileSync(path, lines("f", 0, 100));
  const checkpoint = checkpointOf(path, line("f", 0).length * 10);
  rotateTwice(path);
  // Both rotated generations with one time (a coarse clock): the numbers order them, `.2` before `.1`.
  const same = new Date();
  for (const name of [".1", ".2"]) utimesSync(`${path}${name}`, same, same);
  const text = await readToIdle(path, checkpoint);
  expect(text).toBe(lines("f", 10, 90) + lines("g", 0, 40) + lines("h", 0, 30));
});

test("rotated generations: equal times are each read once, in name order; older, compressed and other files are not read", async () => {
  const path = await sourcePath("agent-tail-generations");
  writeFileSync(`${path}-20261101`, lines("older", 0, 5));
  writeFileSync(path, lines("f", 0, 20));
  const tail = await TailFile.open(path, undefined, plainOptions());
  try {
    const first = await tail.next(line("f", 0).length * 5);
    const readSoFar = first.kind === "data" ? first.bytes.toString() : "";
    // Date-named generations (logrotate's dateext), two of them rotated away while the reader was behind.
    renameSync(path, `${path}-20261120`);
    writeFileSync(`${path}-20261121`, lines("g", 0, 10));
    writeFileSync(`${path}-20261122`, lines("k", 0, 10));
    writeFileSync(path, lines("h", 0, 10));
    // Beside them: a compressed generation, the agent's checkpoint and a temporary file, all newer.
    writeFileSync(`${path}-20261119.gz`, "\x1f\x8b not a log line\n");
    writeFileSync(`${path}.checkpoint`, "{}\n");
    writeFileSync(`${path}.tmp`, lines("tmp", 0, 1));
    const later = new Date(Date.now() + 120_000);
    for (const name of ["-20261119.gz", ".checkpoint", ".tmp"]) utimesSync(`${path}${name}`, later, later);
    // The file being read and both generations after it carry the same time (a coarse clock): read once each.
    const same = new Date(Date.now() + 60_000);
    for (const name of ["-20261120", "-20261121", "-20261122"]) utimesSync(`${path}${name}`, same, same);
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(`${path}-20261101`, old, old);
    const { text } = await readUntil(tail, (event) => event.kind === "idle");
    expect(readSoFar + text).toBe(lines("f", 0, 20) + lines("g", 0, 10) + lines("k", 0, 10) + lines("h", 0, 10));
  } finally {
    await tail.close();
  }
});

test("a restart after two rotations with the checkpoint's file compressed (compress + delaycompress): the generation at .1, then the path", async () => {
  const path = await sourcePath("agent-tail-compressed");
  writeFileSync(`${path}.3.gz`, "\x1f\x8b older, compressed\n");
  writeFileSync(path, lines("f", 0, 100));
  const checkpoint = checkpointOf(path, line("f", 0).length * 10);
  rotateTwice(path);
  // logrotate compresses the generation that reached .2 (delaycompress left .1 as it is).
  writeFileSync(`${path}.2.gz`, Bun.gzipSync(readFileSync(`${path}.2`)));
  rmSync(`${path}.2`);
  const warnings: string[] = [];
  const log = pino({ level: "warn" }, { write: (entry: string) => warnings.push(entry) });
  const text = await readToIdle(path, checkpoint, { ...plainOptions(), log });
  // The checkpoint file's unread rest went into the .gz: lost to the agent, and said so.
  expect(text).toBe(lines("g", 0, 40) + lines("h", 0, 30));
  expect(warnings.some((entry) => entry.includes("reading the generations rotated after it first"))).toBe(true);
});

test("a restart after copytruncate (the path still the checkpoint's inode): the path from its start, the copy not read", async () => {
  const path = await sourcePath("agent-tail-restart-copytruncate");
  writeFileSync(path, lines("f", 0, 100));
  const checkpoint = checkpointOf(path, line("f", 0).length * 100);
  copyFileSync(path, `${path}.1`);
  truncateSync(path, 0);
  appendFileSync(path, lines("n", 0, 20));
  const text = await readToIdle(path, checkpoint);
  expect(text).toBe(lines("n", 0, 20));
});

test("a checkpoint without the file's time (written before it was kept) and its file gone: the path from its start", async () => {
  const path = await sourcePath("agent-tail-old-checkpoint");
  writeFileSync(path, lines("f", 0, 100));
  const { mtimeMs: _, ...checkpoint } = checkpointOf(path, line("f", 0).length * 10);
  rotateTwice(path);
  rmSync(`${path}.2`);
  const text = await readToIdle(path, checkpoint);
  expect(text).toBe(lines("h", 0, 30));
});
