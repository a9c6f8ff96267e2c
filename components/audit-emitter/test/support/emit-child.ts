/**
 * A child process for the stdout tests: an emitter configured from its env (`loadEmitterConfig(process.env)`)
 * writes `EMIT_COUNT` events concurrently, then prints its stats as one JSON line on stderr.
 */
import { pino } from "pino";
import { createAuditEmitter, loadEmitterConfig } from "../../index.ts";

const emitter = createAuditEmitter(loadEmitterConfig(process.env, { source: "kms" }), {
  logger: pino({ level: "silent" }),
});
const count = Number(process.env.EMIT_COUNT ?? "1");
const outcomes = await Promise.allSettled(
  Array.from({ length: count }, (_, i) => emitter.record("key-generation", { resource: `keys/k${i}` })),
);
await emitter.close();
const rejected = outcomes.filter((outcome) => outcome.status === "rejected").length;
process.stderr.write(`${JSON.stringify({ ...emitter.stats(), rejected, healthy: emitter.healthy })}\n`);
