import { spawn } from "node:child_process";
import { StackError } from "./errors.ts";

export interface ToolRun {
  /** The child's whole environment (the stack context's, plus what the tool needs). */
  env: Record<string, string | undefined>;
  cwd?: string;
  /** Each output line, for progress display. */
  onLine?: (line: string) => void;
}

/** Runs an install-time tool (go, mvn, tar, apt-get) to completion; failure carries its last output lines. */
export function runTool(subject: string, command: string, args: string[], run: ToolRun): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: run.cwd,
      env: run.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines: string[] = [];
    let partial = "";
    const onData = (chunk: Buffer) => {
      const fresh = (partial + chunk.toString("utf8")).split(/\r?\n/);
      partial = fresh.pop() ?? "";
      for (const line of fresh) {
        lines.push(line);
        if (line.trim() !== "") run.onLine?.(line);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", (cause) =>
      reject(new StackError("STACK_TOOL_MISSING", `${subject}: cannot run ${command}: ${cause.message}`, subject)),
    );
    child.once("close", (code) => {
      if (partial) lines.push(partial);
      const output = lines.join("\n");
      if (code === 0) resolve(output);
      else
        reject(
          new StackError(
            "STACK_INSTALL_FAILED",
            `${subject}: ${command} ${args.join(" ")} exited with ${code}:\n${lines.slice(-40).join("\n")}`,
            subject,
          ),
        );
    });
  });
}
