import pLimit from "p-limit";
import type { WriteBatch } from "./partition-writer.ts";
import { abortedError } from "./retry-with-backoff.ts";

/**
 * `write`, at most `concurrency` batches at once over every partition (each partition's writer still writes its
 * own batches one at a time, in offset order). A write holds its batch's parsed index fields and SQL arrays until
 * it is indexed: four partitions writing at once at 50k events/s held ~70 MiB more at their peak and waited longer
 * for the two cores (queue-consumer/README.md, "Memory"). A batch whose partition was revoked, or whose consumer
 * stopped, while it waited for a slot is not written: it fails with `QUEUE_CONSUMER_ABORTED`, as a write stopped
 * midway does.
 */
export function writeSlots(concurrency: number, write: WriteBatch): WriteBatch {
  const limit = pLimit(concurrency);
  return (batch, signal) =>
    limit(() =>
      signal.aborted
        ? Promise.reject(abortedError(`write ${batch.topic}/${batch.partition}@${batch.firstOffset}`))
        : write(batch, signal),
    );
}
