import { join } from "node:path";
import type { StackContext } from "./context.ts";

export const logFileOf = (ctx: StackContext, name: string) => join(ctx.stateDir, "logs", `${name}.log`);
/** The pid file of server `name` in a stack's state directory. */
export const serverPidFile = (stateDir: string, name: string) => join(stateDir, "pids", `${name}.pid`);
export const pidFileOf = (ctx: StackContext, name: string) => serverPidFile(ctx.stateDir, name);
