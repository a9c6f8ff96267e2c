import { expect, test } from "bun:test";
import { ConsumerMetrics } from "../index.ts";

const sources = { bufferedBytes: () => 0, paused: () => false, assignedPartitions: () => 0 };

test("records read are counted without a counter call each: every scrape (text or get) sees all of them, once", async () => {
  const metrics = new ConsumerMetrics(sources);
  const readTotal = async () =>
    Number(/^svc_audit_writer_records_read_total (\d+)$/m.exec(await metrics.registry.metrics())?.[1]);
  expect(await readTotal()).toBe(0);
  for (let i = 0; i < 3; i += 1) metrics.noteRecordRead();
  expect(await readTotal()).toBe(3);
  expect(await readTotal()).toBe(3); // a second scrape adds nothing
  metrics.noteRecordRead();
  metrics.noteRecordRead();
  expect((await metrics.recordsRead.get()).values[0]?.value).toBe(5);
  expect(await readTotal()).toBe(5);
});
