import { ARRAY_OF, BinaryCopyRows } from "./pg-binary-copy.ts";
import { childMap } from "./rollup-counts.ts";

/** A minute in `timestamptz`'s microseconds (from 2000-01-01 UTC, itself a minute boundary). */
const MINUTE_MICROS = 60_000_000;

/** A likely size of one event in a postings row: its time (12 bytes) and its id (4 + ~40). */
const BYTES_PER_EVENT = 64;

/**
 * One `principal_events` row: a principal's events of one UTC minute, as a list through `PrincipalPostings`'s
 * `next` (event numbers, in the order they were added).
 */
interface Posting {
  tenant_id: string;
  principal_id: string;
  /** The minute's start, in microseconds from 2000-01-01 UTC. */
  minute: number;
  first: number;
  last: number;
  count: number;
}

/**
 * A chunk's principal postings (docs/audit-storage.md, "Principal postings"), gathered event by event as the
 * chunk's lines are read: one row per tenant, principal and UTC minute, holding the times and ids of those events.
 * Grouped in nested maps, as the rollups are (a key string per event costs more than the lookups); the events of
 * a posting are a list in typed arrays, and an id is where its bytes already are (the chunk's event rows), so no
 * object or string is kept per event.
 */
export class PrincipalPostings {
  readonly #byTenant = new Map<string, Map<string, Map<number, Posting>>>();
  readonly #postings: Posting[] = [];
  readonly #next: Int32Array;
  readonly #micros: Float64Array;
  readonly #idAt: Uint32Array;
  readonly #idLength: Uint32Array;
  #count = 0;

  /** `capacity`: the most events that will be added. */
  constructor(capacity: number) {
    this.#next = new Int32Array(capacity);
    this.#micros = new Float64Array(capacity);
    this.#idAt = new Uint32Array(capacity);
    this.#idLength = new Uint32Array(capacity);
  }

  /**
   * Adds the next event: its time `micros` (microseconds from 2000-01-01 UTC, a safe integer: the event rows'
   * `timestamptz`, whose minute is the one `date_bin` from year 1 gives) and its id, bytes `idAt` to `idAt +
   * idLength` of the buffer that `rows` will be given.
   */
  add(tenant: string, principal: string, micros: number, idAt: number, idLength: number): void {
    const event = this.#count;
    if (event === this.#next.length) throw new RangeError(`principal postings: more than ${event} events`);
    this.#count = event + 1;
    this.#micros[event] = micros;
    this.#idAt[event] = idAt;
    this.#idLength[event] = idLength;
    this.#next[event] = -1;
    const minute = Math.floor(micros / MINUTE_MICROS) * MINUTE_MICROS;
    const byMinute = childMap(childMap(this.#byTenant, tenant), principal);
    const posting = byMinute.get(minute);
    if (posting === undefined) {
      const added = { tenant_id: tenant, principal_id: principal, minute, first: event, last: event, count: 1 };
      byMinute.set(minute, added);
      this.#postings.push(added);
      return;
    }
    this.#next[posting.last] = event;
    posting.last = event;
    posting.count += 1;
  }

  /**
   * The rows of `COPY principal_events (tenant_id, principal_id, minute, times, ids) FROM STDIN (FORMAT binary)`,
   * the ids copied from `ids` (the buffer their positions were given in).
   */
  rows(ids: Uint8Array): Buffer {
    const rows = new BinaryCopyRows(this.#count * BYTES_PER_EVENT);
    for (const posting of this.#postings) {
      rows.row(5);
      rows.text(posting.tenant_id);
      rows.text(posting.principal_id);
      // a minute's start can lie up to a minute beyond a safe integer (the earliest times, 1714): as a bigint
      rows.bigint64(BigInt(posting.minute));
      const times = rows.arrayStart(posting.count, ARRAY_OF.timestamptz);
      for (let event = posting.first; event !== -1; event = this.#next[event] as number) {
        rows.int64(this.#micros[event] as number);
      }
      rows.arrayEnd(times);
      const idList = rows.arrayStart(posting.count, ARRAY_OF.text);
      for (let event = posting.first; event !== -1; event = this.#next[event] as number) {
        const at = this.#idAt[event] as number;
        rows.textBytes(ids, at, at + (this.#idLength[event] as number));
      }
      rows.arrayEnd(idList);
    }
    return rows.end();
  }
}
