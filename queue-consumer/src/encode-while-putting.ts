import { type ClosedBatch, readIndexFields, type SealedBatch } from "./partition-batch.ts";

/**
 * A batch's index rows (`readIndexFields`) encoded while its PUT is in flight, not after it: the writer's thread
 * encodes while MinIO stores the object (docs/audit-storage.md, "Write, per batch"). `putting` must be started
 * first; one turn of the event loop lets the S3 client hand the request to `fetch` (its middleware is promise steps:
 * one `setImmediate` turn was enough in every PUT measured), whose own thread then sends the spool file.
 *
 * The PUT's result stays the caller's to await. A PUT that fails while this runs is not reported as an unhandled
 * rejection (the caller awaits it); when encoding throws, the PUT is let settle first, so no request outlives the
 * write that failed.
 */
export async function encodeWhilePutting(
  closed: ClosedBatch,
  putting: Promise<unknown>,
  encode: (closed: ClosedBatch) => SealedBatch = readIndexFields,
): Promise<SealedBatch> {
  putting.catch(() => undefined);
  await new Promise<void>((resolve) => setImmediate(resolve));
  try {
    return encode(closed);
  } catch (error) {
    await putting.catch(() => undefined);
    throw error;
  }
}
