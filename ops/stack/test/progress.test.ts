import { expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import { createProgress } from "../src/progress.ts";

test("in a log (not a terminal) progress is throttled, and the outcome of each task is always printed", () => {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream;
  const lines: string[] = [];
  (stream as unknown as PassThrough).on("data", (chunk: Buffer) => lines.push(...chunk.toString().trim().split("\n")));
  const progress = createProgress(stream);
  const task = progress.task("install minio", 1000);
  for (let i = 1; i <= 1000; i++) task.update(i, `compiling package ${i}`);
  task.done("built minio");
  progress.stop();
  expect(lines).toHaveLength(2);
  expect(lines[0]).toContain("[install minio]");
  expect(lines[0]).toContain("1/1000 compiling package 1");
  expect(lines[1]).toContain("done: built minio");
});
