import { describe, expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { SQL } from "bun";
import {
  batchEvents,
  EVENTS_PER_CHUNK,
  indexFields,
  MemoryBody,
  objectKey,
  PartitionBatch,
  QueueConsumerError,
  readIndexFields,
} from "../index.ts";
import { pgMicros } from "../src/index-chunk.ts";
import { canRetryIndex } from "../src/write-index.ts";
import { copyRows, encodedEvents, recordLine } from "./helpers.ts";

const line = (id: string, tenant = "t1", time = "2026-11-23T09:15:00.123Z") =>
  Buffer.from(recordLine(id, tenant, time));

describe("PartitionBatch", () => {
  test("body is the lines in offset order; each event's byte range points at its line", () => {
    const batch = new PartitionBatch("topic.a", 3);
    const values = [line("a"), line("b", "t2", "2026-11-23T09:14:00Z"), line("c", "t1", "2026-11-23T09:16:00Z")];
    values.forEach((value, i) => {
      batch.add(value, 100n + BigInt(i), 1_763_889_300_000 + i, 1);
    });
    const sealed = batch.seal();
    expect(sealed.body.contents().toString()).toBe(`${values.map((v) => v.toString()).join("\n")}\n`);
    expect([sealed.firstOffset, sealed.lastOffset, sealed.records]).toEqual([100n, 102n, 3]);
    const events = encodedEvents(sealed);
    for (const event of events) {
      const slice = sealed.body
        .contents()
        .subarray(event.byte_start, event.byte_start + event.byte_length)
        .toString();
      expect(JSON.parse(slice).id).toBe(event.id);
    }
    expect(sealed.minTime).toBe("2026-11-23T09:14:00Z");
    expect(sealed.maxTime).toBe("2026-11-23T09:16:00Z");
    expect(events[1]).toMatchObject({ id: "b", tenant_id: "t2", action: "/kms.v1.Kms/Encrypt", result: "ok" });
  });

  test("an id twice in one batch is stored and read twice (the index's key skips the second); a non-record line is stored, not indexed", () => {
    const batch = new PartitionBatch("t", 0);
    batch.add(line("dup"), 0n, 0, 1);
    batch.add(Buffer.from("not json"), 1n, 0, 1);
    batch.add(line("dup"), 2n, 0, 1);
    batch.add(Buffer.from('{"id":"x","time":"yesterday"}'), 3n, 0, 1);
    // a date that does not exist: PostgreSQL would refuse it, and the batch's index write could never succeed
    batch.add(line("feb30", "t1", "2026-02-30T09:15:00Z"), 4n, 0, 1);
    const sealed = batch.seal();
    expect(sealed.records).toBe(5);
    expect(encodedEvents(sealed).map((e) => e.id)).toEqual(["dup", "dup"]);
    expect([sealed.records - sealed.unindexable, sealed.unindexable]).toEqual([2, 3]);
  });

  test("a batch that outgrows its buffer moves to a larger one, lines and byte ranges kept", () => {
    const batch = new PartitionBatch("t", 0, new MemoryBody(64));
    const values = Array.from({ length: 20 }, (_, i) => line(`grow-${i}`));
    values.forEach((value, i) => {
      batch.add(value, BigInt(i), 0, 1);
    });
    const sealed = batch.seal();
    expect(sealed.body.contents().toString()).toBe(`${values.map((v) => v.toString()).join("\n")}\n`);
    expect(sealed.body.length).toBe(batch.bytes);
    const events = encodedEvents(sealed);
    for (const event of events) {
      const slice = sealed.body
        .contents()
        .subarray(event.byte_start, event.byte_start + event.byte_length)
        .toString();
      expect(JSON.parse(slice).id).toBe(event.id);
    }
    expect(events.length).toBe(20);
  });

  test("backslashes: set once a line holds one (only then can an index string hold a quote or a backslash)", () => {
    const batch = new PartitionBatch("t", 0);
    batch.add(line("plain"), 0n, 0, 1);
    expect(batch.seal().backslashes).toBe(false);
    const quoted = JSON.parse(recordLine("q", "t1", "2026-11-23T09:15:00Z"));
    batch.add(Buffer.from(JSON.stringify({ ...quoted, action: 'say "hi"' })), 1n, 0, 1);
    const sealed = batch.seal();
    expect(sealed.backslashes).toBe(true);
    expect(encodedEvents(sealed).at(-1)?.action).toBe('say "hi"');
  });

  test("an open or closed batch holds bytes only: its index fields are read when the batch is written", () => {
    const batch = new PartitionBatch("t", 0, new MemoryBody(64));
    const values = [line("a"), Buffer.from("not json"), line("a"), line("b", "t2", "2026-11-23T09:14:00Z")];
    const parse = JSON.parse;
    let parsed = 0;
    JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
      parsed += 1;
      return parse(text, reviver);
    };
    try {
      // More lines than the first length table holds, so it grows as the buffer does.
      for (let i = 0; i < 5_000; i++) batch.add(values[i % values.length] as Buffer, BigInt(i), 0, 1);
      const closed = batch.close();
      expect(parsed).toBe(0);
      expect(Object.keys(closed)).not.toContain("chunks");
      expect(closed.lineLengths.length).toBe(5_000);
      const sealed = readIndexFields(closed);
      // Read now: the records by the scan (`indexFields`), the line it refuses by JSON.parse.
      expect(parsed).toBe(1_250);
      expect(sealed.records).toBe(5_000);
      const events = encodedEvents(sealed);
      expect(events.slice(0, 4).map((event) => event.id)).toEqual(["a", "a", "b", "a"]);
      expect([events.length, sealed.records - sealed.unindexable, sealed.unindexable]).toEqual([3_750, 3_750, 1_250]);
      expect(sealed.minTime).toBe("2026-11-23T09:14:00Z");
      const b = events[2];
      expect(
        sealed.body
          .contents()
          .subarray(b?.byte_start, (b?.byte_start ?? 0) + (b?.byte_length ?? 0))
          .toString(),
      ).toBe((values[3] as Buffer).toString());
    } finally {
      JSON.parse = parse;
    }
  });

  test("a record whose value holds a raw newline (JSON whitespace) keeps its own byte range", () => {
    const batch = new PartitionBatch("t", 0);
    const split = Buffer.from(line("m").toString().replace(",", ",\n"));
    batch.add(line("n"), 0n, 0, 1);
    batch.add(split, 1n, 0, 1);
    batch.add(line("o"), 2n, 0, 1);
    const sealed = batch.seal();
    expect(split.includes(0x0a)).toBe(true);
    expect(sealed.records).toBe(3);
    expect(sealed.unindexable).toBe(0);
    const n = line("n").length;
    expect(encodedEvents(sealed).map((event) => [event.id, event.byte_start, event.byte_length])).toEqual([
      ["n", 0, n],
      ["m", n + 1, split.length],
      ["o", n + split.length + 2, line("o").length],
    ]);
  });

  test("the encoded rows are the lines' index fields, scanned or parsed, chunk by chunk; postings group them by minute", () => {
    const batch = new PartitionBatch("t", 0);
    const start = Date.parse("2026-11-23T09:00:00Z");
    const lines = EVENTS_PER_CHUNK + 700;
    for (let i = 0; i < lines; i += 1) {
      const record = JSON.parse(recordLine(`id-${i}`, `t${i % 2}`, new Date(start + i * 7).toISOString()));
      record.principal_id = `p${i % 3}`;
      // parsed lines (an escape, non-ASCII, a NUL), a time with microseconds, lines that are no record
      if (i % 997 === 0) record.action = 'say "hi"';
      if (i % 991 === 0) record.resource = "índex/€";
      if (i % 983 === 0) record.principal_id = "p\u0000";
      if (i % 101 === 0) record.time = "2026-11-23T09:00:01.123456+01:00";
      const value = i % 499 === 0 ? "[1]" : JSON.stringify(record);
      batch.add(Buffer.from(value), BigInt(i), 0, 1);
    }
    const sealed = batch.seal();
    expect(sealed.chunks.map((c) => [c.firstLine, c.events])).toEqual([
      [0, EVENTS_PER_CHUNK],
      [(sealed.chunks[0]?.endLine as number) ?? -1, sealed.records - sealed.unindexable - EVENTS_PER_CHUNK],
    ]);
    expect(sealed.chunks.at(-1)?.endLine).toBe(lines);
    const read = batchEvents(sealed);
    expect(read.length).toBe(sealed.records - sealed.unindexable);
    expect(read.some((e) => e.principal_id === "p\uFFFD")).toBe(true);
    expect(encodedEvents(sealed, 42n)).toEqual(
      read.map((e) => ({
        object_id: 42n,
        id: e.id,
        tenant_id: e.tenant_id,
        micros: pgMicros(e.time, e.timeMs) as number,
        principal_id: e.principal_id,
        action: e.action,
        result: e.result,
        resource: e.resource,
        byte_start: e.byte_start,
        byte_length: e.byte_length,
      })),
    );
    // the postings: per tenant, principal and minute, the events' times and ids in line order
    const expected = new Map<string, { times: number[]; ids: string[] }>();
    for (const e of read.slice(0, EVENTS_PER_CHUNK)) {
      const micros = pgMicros(e.time, e.timeMs) as number;
      const key = `${e.tenant_id}|${e.principal_id}|${Math.floor(micros / 60e6) * 60e6}`;
      const posting = expected.get(key) ?? { times: [], ids: [] };
      posting.times.push(micros);
      posting.ids.push(e.id);
      expected.set(key, posting);
    }
    const elements = (array: Buffer) => {
      const [dimensions, , , length, lowerBound] = [0, 4, 8, 12, 16].map((at) => array.readInt32BE(at));
      expect([dimensions, lowerBound]).toEqual([1, 1]);
      const items: Buffer[] = [];
      for (let at = 20; items.length < (length as number); ) {
        const size = array.readInt32BE(at);
        items.push(array.subarray(at + 4, at + 4 + size));
        at += 4 + size;
      }
      return items;
    };
    const posted = new Map(
      copyRows((sealed.chunks[0] as (typeof sealed.chunks)[0]).postingRows()).map((row) => {
        const [tenant, principal, minute, times, ids] = row as [Buffer, Buffer, Buffer, Buffer, Buffer];
        return [
          `${tenant.toString()}|${principal.toString()}|${Number(minute.readBigInt64BE())}`,
          {
            times: elements(times).map((t) => Number(t.readBigInt64BE())),
            ids: elements(ids).map((id) => id.toString()),
          },
        ];
      }),
    );
    expect(posted).toEqual(expected);
  });

  test("a chunk holding a time that has no exact binary form is not plain: nothing of it is encoded", () => {
    const batch = new PartitionBatch("t", 0);
    batch.add(line("a"), 0n, 0, 1);
    batch.add(line("b", "t1", "2026-11-23T09:15:00.1234567Z"), 1n, 0, 1);
    batch.add(line("c", "t2"), 2n, 0, 1);
    const sealed = batch.seal();
    const [chunk] = sealed.chunks;
    expect([chunk?.plain, chunk?.events, sealed.records - sealed.unindexable]).toEqual([false, 3, 3]);
    expect(chunk?.tenants).toEqual(["t1", "t2"]); // kept for the duplicates path, which inserts by key too
    expect(() => chunk?.postingRows()).toThrow("only when plain");
    expect(batchEvents(sealed, chunk?.firstLine, chunk?.endLine).map((e) => e.id)).toEqual(["a", "b", "c"]);
  });

  test("a chunk released once its batch is indexed frees its rows at once: they are empty and cannot be copied again", () => {
    const batch = new PartitionBatch("t", 0);
    batch.add(line("a"), 0n, 0, 1);
    const [chunk] = batch.seal().chunks;
    if (chunk === undefined) throw new Error("no chunk");
    const keys = new Map(chunk.tenants.map((tenant) => [tenant, 1]));
    const rows = chunk.eventRows(1n, keys);
    const postings = chunk.postingRows();
    expect([rows.length > 0, postings.length > 0]).toEqual([true, true]);
    chunk.release();
    expect([rows.length, postings.length, (rows.buffer as ArrayBuffer).detached]).toEqual([0, 0, true]);
    expect(() => chunk.eventRows(1n, keys)).toThrow("before `release`");
    chunk.release(); // again: nothing left to free
    expect(chunk.events).toBe(1);
  });

  test("each row gets its tenant's key, written again on a retry; a tenant without a key is refused", () => {
    const batch = new PartitionBatch("t", 0);
    for (const [i, tenant] of ["t1", "t2", "t1", "t3", "t3"].entries())
      batch.add(line(`e${i}`, tenant), BigInt(i), 0, 1);
    const [chunk] = batch.seal().chunks;
    if (chunk === undefined) throw new Error("no chunk");
    expect(chunk.tenants).toEqual(["t1", "t2", "t3"]);
    const keyColumn = (rows: Buffer) => copyRows(rows).map((row) => (row[1] as Buffer).readInt32BE());
    expect(
      keyColumn(
        chunk.eventRows(
          1n,
          new Map([
            ["t1", 7],
            ["t2", 8],
            ["t3", 9],
          ]),
        ),
      ),
    ).toEqual([7, 8, 7, 9, 9]);
    // the index write retried, with the keys read again (another value: the row holds what it is given)
    expect(
      keyColumn(
        chunk.eventRows(
          1n,
          new Map([
            ["t1", 70],
            ["t2", 80],
            ["t3", 90],
          ]),
        ),
      ),
    ).toEqual([70, 80, 70, 90, 90]);
    const missing = thrownBy(
      () =>
        chunk.eventRows(
          1n,
          new Map([
            ["t1", 7],
            ["t2", 8],
          ]),
        ),
      QueueConsumerError,
    );
    expect([missing.code, missing.subject, missing.canRetry]).toEqual([
      "QUEUE_CONSUMER_TENANT_KEY_MISSING",
      "t3",
      false,
    ]);
    // the index write does not retry it (the same keys would be missing again), as it retries a lost connection
    const lost = new SQL.PostgresError("Connection closed", { code: "ERR_POSTGRES_CONNECTION_CLOSED" });
    expect([canRetryIndex(missing), canRetryIndex(lost)]).toEqual([false, true]);
  });

  test("closes by bytes and records; keeps when its first record came (the age's start)", () => {
    const batch = new PartitionBatch("t", 0);
    batch.add(line("a"), 0n, 0, 1_000);
    expect(batch.isFull({ maxBytes: 10_000, maxRecords: 2 })).toBe(false);
    expect(batch.isFull({ maxBytes: 100, maxRecords: 2 })).toBe(true);
    batch.add(line("b"), 1n, 0, 1_500);
    expect(batch.isFull({ maxBytes: 10_000, maxRecords: 2 })).toBe(true);
    expect(new PartitionBatch("t", 0).openedAt).toBe(0);
    expect(batch.openedAt).toBe(1_000);
  });
});

describe("indexFields", () => {
  test("tenant falls back to claimed_tenant_id; NUL is replaced", () => {
    const fields = indexFields(
      Buffer.from(
        JSON.stringify({
          id: "i",
          time: "2026-01-01T00:00:00Z",
          tenant_id: "",
          claimed_tenant_id: "c",
          action: "a\u0000b",
        }),
      ),
    );
    expect(fields).toMatchObject({ id: "i", tenant_id: "c", action: "a\uFFFDb", principal_id: "", result: "" });
  });
  test("no id, a non-RFC 3339 time or an array is not indexable", () => {
    expect(indexFields(Buffer.from('{"time":"2026-01-01T00:00:00Z"}'))).toBeUndefined();
    expect(indexFields(Buffer.from('{"id":"i","time":"2026-01-01 00:00"}'))).toBeUndefined();
    expect(indexFields(Buffer.from("[1]"))).toBeUndefined();
  });
});

describe("objectKey", () => {
  test("fixed by the batch's first record: UTC hour of its timestamp, partition, first offset", () => {
    const parts = {
      prefix: "p/",
      topic: "svc.audit.events.v1",
      partition: 3,
      firstOffset: 1_234_567n,
      firstTimestampMs: Date.parse("2026-11-23T09:59:59.999Z"),
      gzip: false,
    };
    expect(objectKey(parts)).toBe(
      "p/v1/svc.audit.events.v1/dt=2026-11-23/hour=09/partition=003/00000000000001234567.jsonl",
    );
    expect(objectKey({ ...parts, prefix: "", gzip: true })).toEndWith("00000000000001234567.jsonl.gz");
  });
});
