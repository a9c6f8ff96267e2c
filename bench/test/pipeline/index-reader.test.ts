import { afterAll, beforeAll, expect, test } from "bun:test";
import { ensureIndexSchema } from "@svc/queue-consumer";
import { randomName, stackEnv } from "@svc/testkit";
import { SQL } from "bun";
import { IndexReader } from "../../src/pipeline/index-reader.ts";

const url = stackEnv().postgresUrl;
const schema = randomName("bench_reader").replaceAll("-", "_");
const sql = new SQL({ url, max: 1 });
let reader: IndexReader;

beforeAll(async () => {
  await ensureIndexSchema(sql, schema);
  reader = new IndexReader(url, schema);
});
afterAll(async () => {
  await reader.dropAndClose();
  await sql.close();
});

async function object(partition: number, first: number, last: number, version: string): Promise<void> {
  await sql.unsafe(
    `INSERT INTO "${schema}".objects (bucket, key, version_id, topic, partition, first_offset, last_offset, records, bytes)
     VALUES ('b', $1, $2, 't', $3, $4, $5, $6, 1)`,
    [`p${partition}/${first}`, version, partition, first, last, last - first + 1],
  );
}

test("durable records count each offset once: a retried batch and a batch cut anew over another add nothing", async () => {
  expect(await reader.durableRecords()).toBe(0);
  await object(0, 0, 99, "v1");
  await object(0, 0, 99, "v2"); // the same batch PUT again (a retry: a second version of its key)
  await object(0, 100, 199, "v1");
  await object(1, 0, 49, "v1");
  await object(1, 25, 74, "v1"); // cut anew after a rebalance, over half of the one before
  await object(2, 10, 19, "v1"); // a partition read from offset 10
  expect(await reader.durableRecords()).toBe(200 + 75 + 10);
  // As written, for the fault loop's count of records the consumer wrote twice.
  expect(await reader.recordsInObjects()).toBe(100 + 100 + 100 + 50 + 50 + 10);
});
