import { expect, test } from "bun:test";
import { rejectionOf } from "@svc/testkit";
import { StackError } from "../src/errors.ts";
import { runTool } from "../src/run-tool.ts";

const failureOf = (promise: Promise<unknown>) => rejectionOf(promise, StackError);

test("runTool returns the output and streams lines", async () => {
  const lines: string[] = [];
  const output = await runTool("t", "sh", ["-c", "echo one; echo two >&2"], {
    env: process.env,
    onLine: (l) => lines.push(l),
  });
  expect(output).toContain("one");
  expect(lines.sort()).toEqual(["one", "two"]);
});

test("a failing install tool is STACK_INSTALL_FAILED with its output", async () => {
  const error = await failureOf(runTool("t", "sh", ["-c", "echo checksum mismatch; exit 2"], { env: process.env }));
  expect(error.code).toBe("STACK_INSTALL_FAILED");
  expect(error.message).toContain("checksum mismatch");
});

test("a missing tool is STACK_TOOL_MISSING", async () => {
  const error = await failureOf(runTool("t", "no-such-tool-xyz", [], { env: process.env }));
  expect(error.code).toBe("STACK_TOOL_MISSING");
});

test("runTool returns the whole output, however long (the Go dependency count is read from it)", async () => {
  const output = await runTool("t", "seq", ["1", "500"], { env: process.env });
  expect(output.split("\n")).toHaveLength(500);
});

test("a failure message keeps only the last lines of a long output", async () => {
  const error = await failureOf(runTool("t", "sh", ["-c", "seq 1 500; exit 1"], { env: process.env }));
  expect(error.message).toContain("\n500");
  expect(error.message).not.toContain("\n400\n");
});
