export { rejectionsOf, SvcAggregateError, SvcError, type SvcErrorOptions } from "./src/svc-error.ts";
export { type WaitOptions, waitFor } from "./src/wait-for.ts";
