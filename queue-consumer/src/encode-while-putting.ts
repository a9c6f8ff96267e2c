import { type ClosedBatch, readIndexFieldsInSlices, type SealedBatch } from "./partition-batch.ts";

/** One turn of the event loop: what is ready (a PUT's answer, a fetch, a statement's result) runs first. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A batch's index rows encoded while its PUT is in flight, not after it: the writer's thread encodes while MinIO
 * stores the object (docs/audit-storage.md, "Write, per batch"). `putting` must be started first. The rows are
 * encoded a slice of lines at a time, each after a turn of the event loop (`readIndexFieldsInSlices`): the first
 * turn lets the S3 client hand the request to `fetch` (its middleware is promise steps: one `setImmediate` turn
 * was enough in every PUT measured), whose own thread then sends the spool file; the later ones let the PUT's answer
 * be taken, and its moment stamped, when it comes, not after the whole batch is encoded.
 *
 * The PUT's result stays the caller's to await. A PUT that fails while this runs is not reported as an unhandled
 * rejection (the caller awaits it); when encoding throws, the PUT is let settle first, so no request outlives the
 * write that failed.
 */
export async function encodeWhilePutting(
  closed: ClosedBatch,
  putting: Promise<unknown>,
  encode: (closed: ClosedBatch) => Promise<SealedBatch> = (batch) => readIndexFieldsInSlices(batch, nextTurn),
): Promise<SealedBatch> {
  putting.catch(() => undefined);
  try {
    return await encode(closed);
  } catch (error) {
    await putting.catch(() => undefined);
    throw error;
  }
}
