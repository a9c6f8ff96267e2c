import { join } from "node:path";
import type { StackContext } from "./context.ts";

export const logFileOf = (ctx: StackContext, name: string) => join(ctx.stateDir, "logs", `${name}.log`);
export const pidFileOf = (ctx: StackContext, name: string) => join(ctx.stateDir, "pids", `${name}.pid`);
