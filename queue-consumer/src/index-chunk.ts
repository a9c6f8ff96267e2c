import type { LineFields, ScannedIndexLine } from "./index-fields.ts";
import { BinaryCopyRows, releaseCopyPayload } from "./pg-binary-copy.ts";
import { PrincipalPostings } from "./principal-postings.ts";
import { minuteBin, RollupCounter, type RollupRow } from "./rollup-counts.ts";
import { tenantKeyOf } from "./tenant-keys.ts";

/** A likely size of one event's `COPY` row (the payload grows past it when its strings are longer). */
const COPY_BYTES_PER_EVENT = 256;

/** `timestamptz`'s binary form counts microseconds from 2000-01-01 UTC; `timeMs` counts milliseconds from 1970. */
const PG_EPOCH_MS = 946_684_800_000;

/** Largest microsecond count (either sign) a double holds exactly: 2^53 − 1, from 2000 the years 1714 to 2285. */
const EXACT_MICROS = Number.MAX_SAFE_INTEGER;

/** Where the object's id goes in an event row: after the row's field count (int16) and the field's length (int32). */
const OBJECT_ID_IN_ROW = 6;

/** Where the tenant's key goes in an event row: after the object's id (8) and the field's length (int32). */
const TENANT_KEY_IN_ROW = OBJECT_ID_IN_ROW + 8 + 4;

/**
 * The event's time as `timestamptz` stores it, microseconds from 2000-01-01 UTC, for the plain path, which copies
 * it in binary: PostgreSQL parsing RFC 3339 text took 0.2–0.8 µs of its ~8 µs per row (docs/audit-storage.md,
 * "Write, per batch"). Undefined when the plain path must not take the event: more than six fractional digits
 * (PostgreSQL rounds to the microsecond where `timeMs` truncates to the millisecond, so the rollups' bins could
 * differ: …59.9999995 is the next minute there), or a time before 1714 or after 2285, whose microsecond count a
 * double does not hold exactly. A chunk holding such an event goes in as duplicates do, its times as text.
 */
export function pgMicros(time: string, timeMs: number): number | undefined {
  let micros = 0;
  if (time.charCodeAt(19) === 0x2e) {
    // RFC 3339 puts the fraction at 19: timeMs holds its first three digits, the next three are microseconds
    let digits = 0;
    for (let i = 20; i < time.length; i += 1) {
      const c = time.charCodeAt(i);
      if (c < 0x30 || c > 0x39) break;
      digits += 1;
      if (digits > 6) return undefined;
      if (digits > 3) micros += (c - 0x30) * 10 ** (6 - digits);
    }
  }
  // the milliseconds are moved to 2000 first: their product by 1000 is then exact (even, within 2^53 + 999 when
  // the sum is within 2^53 − 1), and so is the sum
  const total = (timeMs - PG_EPOCH_MS) * 1000 + micros;
  return Math.abs(total) <= EXACT_MICROS ? total : undefined;
}

/**
 * Up to `capacity` consecutive events of a batch (one `COPY`) encoded as their lines are read
 * (docs/audit-storage.md, "Write, per batch"): the event rows of `COPY events (object_id, tenant_key, id, time,
 * principal_id, action, result, resource, byte_start, byte_length) FROM STDIN (FORMAT binary)`, their principal
 * postings and their minute and hour rollups. Nothing is kept per event but bytes and typed arrays: an object and
 * three strings per event, alive from the batch's read to the end of its index write, were a quarter of the
 * writer's CPU in garbage collection at 50k events/s (queue-consumer/README.md, "Throughput").
 *
 * The object's id is known only inside the index transaction, the tenants' keys once the batch's tenants are read
 * (`tenants`, `tenantKeys`): each row holds placeholders for both, written by `eventRows`.
 */
export class IndexChunk {
  /** Events added. */
  events = 0;
  /**
   * Whether every event's time has its binary form (`pgMicros`). Without it the chunk goes in as duplicates do
   * (its lines read again, times as text), and nothing more is encoded.
   */
  plain = true;
  /** Lines of the batch (by their order) after the chunk's: the chunk holds the indexable ones of `firstLine`… */
  endLine: number;
  /** The chunk's tenants, each once, in the order first seen (plain or not). */
  readonly tenants: string[] = [];
  readonly #tenantSlots = new Map<string, number>();
  #lastTenant: string | undefined;
  #lastSlot = 0;
  #rows: BinaryCopyRows | undefined;
  #rowStarts: Uint32Array;
  /** Each row's tenant, by its place in `tenants`. */
  #rowTenants: Uint32Array;
  #postings: PrincipalPostings | undefined;
  #minutes: RollupCounter | undefined = new RollupCounter();
  #ended: { rows: Buffer; postings: Buffer; minutes: RollupRow[] } | undefined;

  /** `firstLine`: the number of the batch's line it starts at; `capacity`: the most events it takes. */
  constructor(
    readonly firstLine: number,
    readonly capacity: number,
  ) {
    this.endLine = firstLine;
    this.#rows = new BinaryCopyRows(capacity * COPY_BYTES_PER_EVENT);
    this.#rowStarts = new Uint32Array(capacity);
    this.#rowTenants = new Uint32Array(capacity);
    this.#postings = new PrincipalPostings(capacity);
  }

  get full(): boolean {
    return this.events === this.capacity;
  }

  /** Adds the event of a scanned line (`scanIndexLine`), bytes `byteStart` to `byteEnd` of the batch's body. */
  addScanned(body: Buffer, line: ScannedIndexLine, byteStart: number, byteEnd: number): void {
    const micros = this.#begin(line.tenant_id, line.time, line.timeMs);
    const rows = this.#rows;
    if (micros === undefined || rows === undefined) return;
    const idAt = rows.textBytes(body, line.idStart, line.idEnd);
    this.#fields(micros, line.principal_id, line.action, line.result);
    rows.textBytes(body, line.resourceStart, line.resourceEnd);
    this.#end(line, line.timeMs, micros, idAt, line.idEnd - line.idStart, byteStart, byteEnd);
  }

  /** Adds the event of a parsed line (`parsedLineFields`: it may hold escapes and non-ASCII text). */
  addParsed(fields: LineFields, byteStart: number): void {
    const micros = this.#begin(fields.tenant_id, fields.time, fields.timeMs);
    const rows = this.#rows;
    if (micros === undefined || rows === undefined) return;
    const id = Buffer.from(fields.id, "utf8");
    const idAt = rows.textBytes(id, 0, id.length);
    this.#fields(micros, fields.principal_id, fields.action, fields.result);
    rows.text(fields.resource);
    this.#end(fields, fields.timeMs, micros, idAt, id.length, byteStart, byteStart + fields.byte_length);
  }

  /**
   * Counts the event and notes its tenant; its time's binary form, or undefined (the chunk no longer plain) when it
   * has none.
   */
  #begin(tenant: string, time: string, timeMs: number): number | undefined {
    if (this.#ended !== undefined) throw new Error("an ended index chunk takes no event");
    if (this.full) throw new RangeError(`index chunk: more than ${this.capacity} events`);
    this.events += 1;
    const slot = this.#slotOf(tenant);
    if (!this.plain) return undefined;
    const micros = pgMicros(time, timeMs);
    if (micros === undefined) {
      // nothing encoded is used: the chunk's lines are read again and inserted with their times as text
      this.plain = false;
      this.#rows = undefined;
      this.#postings = undefined;
      this.#minutes = undefined;
      return undefined;
    }
    const rows = this.#rows as BinaryCopyRows;
    this.#rowStarts[this.events - 1] = rows.row(10);
    rows.bigint64(0n); // the object's id, written by `eventRows`
    this.#rowTenants[this.events - 1] = slot;
    rows.int32(0); // the tenant's key, written by `eventRows`
    return micros;
  }

  /** `tenant`'s place in `tenants`, added when new (a batch's lines mostly repeat the line before's tenant). */
  #slotOf(tenant: string): number {
    if (tenant === this.#lastTenant) return this.#lastSlot;
    let slot = this.#tenantSlots.get(tenant);
    if (slot === undefined) {
      slot = this.tenants.length;
      this.tenants.push(tenant);
      this.#tenantSlots.set(tenant, slot);
    }
    this.#lastTenant = tenant;
    this.#lastSlot = slot;
    return slot;
  }

  /** The fields between the id and the resource. */
  #fields(micros: number, principal: string, action: string, result: string): void {
    const rows = this.#rows as BinaryCopyRows;
    rows.int64(micros);
    rows.text(principal);
    rows.text(action);
    rows.text(result);
  }

  #end(
    event: { tenant_id: string; principal_id: string; action: string; result: string },
    timeMs: number,
    micros: number,
    idAt: number,
    idLength: number,
    byteStart: number,
    byteEnd: number,
  ): void {
    const rows = this.#rows as BinaryCopyRows;
    rows.int64(byteStart);
    rows.int32(byteEnd - byteStart);
    (this.#postings as PrincipalPostings).add(event.tenant_id, event.principal_id, micros, idAt, idLength);
    (this.#minutes as RollupCounter).add(
      event.tenant_id,
      event.principal_id,
      event.action,
      event.result,
      minuteBin(timeMs),
      1,
    );
  }

  /** No more events: the payloads are finished (the postings need all of the chunk's events). */
  end(): void {
    if (this.#ended !== undefined || !this.plain) return;
    const rows = (this.#rows as BinaryCopyRows).end();
    const minutes = (this.#minutes as RollupCounter).rows;
    this.#ended = { rows, postings: (this.#postings as PrincipalPostings).rows(rows), minutes };
    this.#rows = undefined;
    this.#postings = undefined;
    this.#minutes = undefined;
  }

  /**
   * The event rows (`plain` chunks, after `end`), each holding `objectId` and its tenant's key from `keys` (which
   * must hold every one of `tenants`). Called again (the index write retried), it writes the same or new values.
   */
  eventRows(objectId: bigint, keys: ReadonlyMap<string, number>): Buffer {
    const { rows } = this.#encoded();
    const keyOfSlot = this.tenants.map((tenant) => tenantKeyOf(keys, tenant));
    for (let i = 0; i < this.events; i += 1) {
      const start = this.#rowStarts[i] as number;
      rows.writeBigInt64BE(objectId, start + OBJECT_ID_IN_ROW);
      rows.writeInt32BE(keyOfSlot[this.#rowTenants[i] as number] as number, start + TENANT_KEY_IN_ROW);
    }
    return rows;
  }

  /** The principal postings' rows (`plain` chunks, after `end`). */
  postingRows(): Buffer {
    return this.#encoded().postings;
  }

  /** The minute rollups (`plain` chunks, after `end`), in the order their groups were first seen. */
  minuteRollups(): readonly RollupRow[] {
    return this.#encoded().minutes;
  }

  /**
   * Frees the encoded rows now (the batch's index is written): their memory is not left to a collection. The chunk
   * cannot be written after it.
   */
  release(): void {
    if (this.#ended !== undefined) {
      releaseCopyPayload(this.#ended.rows);
      releaseCopyPayload(this.#ended.postings);
    }
    this.#ended = undefined;
    this.#rows = undefined;
    this.#postings = undefined;
    this.#minutes = undefined;
  }

  #encoded(): { rows: Buffer; postings: Buffer; minutes: RollupRow[] } {
    if (this.#ended === undefined)
      throw new Error("an index chunk is read after `end`, only when plain, and before `release`");
    return this.#ended;
  }
}
