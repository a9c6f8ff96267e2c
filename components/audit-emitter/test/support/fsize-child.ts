/**
 * A child process for the partial-write test: run under a file-size limit (`ulimit -f`, SIGXFSZ ignored), it
 * writes one event per stdin line (`<resource>`) to `SVC_AUDIT_LOG_FILE` and answers `ok` or the error code.
 */
import { pino } from "pino";
import { createAuditEmitter, loadEmitterConfig } from "../../index.ts";

const emitter = createAuditEmitter(loadEmitterConfig(process.env, { source: "kms" }), {
  logger: pino({ level: "silent" }),
});
process.stdout.write("ready\n");
for await (const line of console) {
  if (line === "") break;
  try {
    await emitter.record("rotation", { resource: line });
    process.stdout.write("ok\n");
  } catch (error) {
    process.stdout.write(`${(error as { code?: string }).code ?? "error"}\n`);
  }
}
await emitter.close();
