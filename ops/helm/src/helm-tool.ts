import { ensureTool, type ToolOptions } from "@svc/stack";

/**
 * The path of the pinned helm (ops/tools/helm: go.mod + go.sum pin the version and every dependency), built on
 * first use into the shared cache as one of the stack's Go tools (ops/stack/src/tools.ts), under the same install
 * lock, so two test files (or a test and CI) never build it at once. A second call returns at once.
 */
export const ensureHelm = (options: ToolOptions = {}): Promise<string> => ensureTool("helm", options);
