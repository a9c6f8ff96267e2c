import { SvcError } from "@svc/common";
import { SQL } from "bun";
import { Presets, SingleBar } from "cli-progress";
import { Command } from "commander";
import { parseQueueConsumerConfig } from "./config.ts";
import { ensureIndexSchema } from "./index-schema.ts";
import { listPrefixes, rebuildIndex } from "./rebuild-index.ts";
import { readerS3Client } from "./s3-client.ts";

// Wiring only: arguments, the writer's settings (its environment: bucket, key prefix, topic, S3, index schema; Kafka
// is not contacted), then `rebuildIndex`; the summary as JSON on stdout, progress on stderr when it is a terminal.
// Exit 0 done, 1 failed (run it again: what was indexed is skipped), 2 bad argument or setting.
const program = new Command("rebuild-index")
  .description("index the audit objects the index does not hold (docs/audit-storage.md, 'Rebuilding the index')")
  .option("--from <day>", "first UTC day (YYYY-MM-DD, the keys' dt=) to read; with --to")
  .option("--to <day>", "last UTC day to read, included; with --from")
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .parse();
const options = program.opts<{ from?: string; to?: string }>();

function fail(error: unknown): never {
  const code = error instanceof SvcError ? error.code : "UNEXPECTED";
  process.stderr.write(`rebuild-index: ${code}: ${(error as Error).message}\n`);
  process.exit(code.endsWith("_INVALID") ? 2 : 1);
}

let config: ReturnType<typeof parseQueueConsumerConfig>;
try {
  config = parseQueueConsumerConfig(process.env);
} catch (error) {
  fail(error);
}
const target = { keyPrefix: config.keyPrefix, topic: config.topic, fromDay: options.from, toDay: options.to };
try {
  // The days are checked before anything is touched (the schema would be created first).
  listPrefixes(target);
} catch (error) {
  fail(error);
}
const sql = new SQL({ url: config.pgUrl, max: 2 });
const s3 = readerS3Client(config.s3);
const bar = process.stderr.isTTY
  ? new SingleBar(
      {
        format: "rebuild-index | {value} versions | {indexed} indexed, {events} events | {skipped} already indexed",
        stream: process.stderr,
      },
      Presets.shades_classic,
    )
  : undefined;
try {
  await ensureIndexSchema(sql, config.indexSchema);
  bar?.start(0, 0, { indexed: 0, events: 0, skipped: 0 });
  const summary = await rebuildIndex({
    s3,
    sql,
    ...target,
    bucket: config.bucket,
    schema: config.indexSchema,
    onProgress: (so) =>
      bar?.update(so.versions, { indexed: so.indexed, events: so.eventsInserted, skipped: so.alreadyIndexed }),
  });
  bar?.stop();
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} catch (error) {
  bar?.stop();
  fail(error);
} finally {
  s3.destroy();
  await sql.close();
}
