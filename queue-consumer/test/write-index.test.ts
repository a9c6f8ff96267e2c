import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hangUpListener, rejectionOf, waitFor } from "@svc/testkit";
import { SQL } from "bun";
import {
  ensureIndexSchema,
  PartitionBatch,
  QueueConsumerError,
  WRITER_VERSION_REFUSED,
  writeBatchIndex,
} from "../index.ts";
import { canRetryIndex } from "../src/write-index.ts";
import {
  backToVersion5Events,
  batchOf,
  dropSchema,
  indexFacts,
  recordLine,
  recordVersion,
  stackAddresses,
  testNames,
  writtenObject,
} from "./helpers.ts";

const addresses = stackAddresses();
const sql = new SQL({ url: addresses.pgUrl, max: 2 });
const { schema } = testNames("index");

const object = (version: string, bytes = 100) => writtenObject(`k/${schema}`, version, bytes);

/** Runs `body` on a fresh index schema of its own, dropped afterwards. */
async function withOwnSchema(name: string, body: (own: string) => Promise<void>): Promise<void> {
  const { schema: own } = testNames(name);
  await ensureIndexSchema(sql, own);
  try {
    await body(own);
  } finally {
    await dropSchema(sql, own);
  }
}

beforeAll(async () => {
  await ensureIndexSchema(sql, schema);
  await ensureIndexSchema(sql, schema); // twice: IF NOT EXISTS
});

afterAll(async () => {
  await dropSchema(sql, schema);
  await sql.close();
});

describe("writeBatchIndex", () => {
  test("objects, events with byte ranges, minute counts and the mark, in one transaction", async () => {
    const batch = batchOf(
      [
        { id: "e1", time: "2026-11-23T09:00:01Z", principal: "p1" },
        { id: "e2", time: "2026-11-23T09:00:59.999Z", principal: "p1" },
        { id: "e3", time: "2026-11-23T09:01:00Z", principal: "p2" },
      ],
      10n,
    );
    const result = await writeBatchIndex(sql, schema, batch, object("v1"));
    expect(result.inserted).toBe(3);
    const counts =
      await sql`SELECT minute, principal_id, n::int AS n FROM ${sql(`${schema}.counts`)} ORDER BY minute, principal_id`;
    expect(
      counts.map((r: { minute: Date; principal_id: string; n: number }) => [
        r.minute.toISOString(),
        r.principal_id,
        r.n,
      ]),
    ).toEqual([
      ["2026-11-23T09:00:00.000Z", "p1", 2],
      ["2026-11-23T09:01:00.000Z", "p2", 1],
    ]);
    const [e2] =
      await sql`SELECT object_id::text AS object_id, byte_start::int AS s, byte_length AS l FROM ${sql(`${schema}.events`)} WHERE id = 'e2'`;
    expect(BigInt(e2.object_id)).toBe(result.objectId);
    expect(
      JSON.parse(
        batch.body
          .contents()
          .subarray(e2.s, e2.s + e2.l)
          .toString(),
      ).id,
    ).toBe("e2");
    const [mark] =
      await sql`SELECT indexed_through::int AS t FROM ${sql(`${schema}.marks`)} WHERE topic = 'topic.x' AND partition = 1`;
    expect(mark.t).toBe(12);
  });

  test("a retried batch (second version) and a duplicate shipped twice are indexed and counted once", async () => {
    const again = batchOf(
      [
        { id: "e1", time: "2026-11-23T09:00:01Z", principal: "p1" },
        { id: "e2", time: "2026-11-23T09:00:59.999Z", principal: "p1" },
        { id: "e3", time: "2026-11-23T09:01:00Z", principal: "p2" },
        { id: "e4", time: "2026-11-23T09:01:30Z", principal: "p2" },
      ],
      10n,
    );
    const result = await writeBatchIndex(sql, schema, again, object("v2"));
    expect(result.inserted).toBe(1);
    // The same object version indexed again (a transaction whose answer was lost) inserts nothing.
    const replay = await writeBatchIndex(sql, schema, again, object("v2"));
    expect(replay).toEqual({ objectId: result.objectId, inserted: 0 });
    const facts = await indexFacts(sql, schema);
    expect(facts).toEqual({ events: 4, distinctIds: 4, counted: 4, posted: 4, strays: 0, objects: 2 });
    const [e1] =
      await sql`SELECT o.version_id FROM ${sql(`${schema}.events`)} e JOIN ${sql(`${schema}.objects`)} o USING (object_id) WHERE e.id = 'e1'`;
    expect(e1.version_id).toBe("v1");
  });

  test("the hour rollup is the minute rollup summed per UTC hour, duplicates counted in neither", async () => {
    const crossing = batchOf(
      [
        { id: "h1", time: "2026-11-23T09:59:59.999999Z", principal: "p1" },
        { id: "h2", time: "2026-11-23T10:00:00Z", principal: "p1" },
        { id: "h3", time: "2026-11-23T10:30:00+01:00", principal: "p2" },
        { id: "h2", time: "2026-11-23T10:00:00Z", principal: "p1" },
        { id: "e1", time: "2026-11-23T09:00:01Z", principal: "p1" },
      ],
      0n, // offsets below the mark: it stays where the next test expects it
    );
    const result = await writeBatchIndex(sql, schema, crossing, object("v-hours"));
    expect(result.inserted).toBe(3);
    const hours = await sql.unsafe(
      `SELECT hour, principal_id, action, result, n::int AS n FROM "${schema}".counts_hour ORDER BY 1, 2, 3, 4`,
    );
    const summed = await sql.unsafe(
      `SELECT date_trunc('hour', minute, 'UTC') AS hour, principal_id, action, result, sum(n)::int AS n
         FROM "${schema}".counts GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
    );
    expect(hours).toEqual(summed);
    const byHour = hours.map((r: { hour: Date; principal_id: string; n: number }) => [
      r.hour.toISOString(),
      r.principal_id,
      r.n,
    ]);
    expect(byHour).toEqual([
      ["2026-11-23T09:00:00.000Z", "p1", 3],
      ["2026-11-23T09:00:00.000Z", "p2", 3],
      ["2026-11-23T10:00:00.000Z", "p1", 1],
    ]);
    const [{ events, hourly }] = await sql.unsafe(
      `SELECT (SELECT count(*) FROM "${schema}".events)::int AS events,
              (SELECT sum(n) FROM "${schema}".counts_hour)::int AS hourly`,
    );
    expect(hourly).toBe(events);
  });

  test("the rollups equal the events grouped by PostgreSQL, times with more than 6 fractional digits included", async () => {
    await withOwnSchema("index-bins", async (own) => {
      const times = [
        "2026-11-23T10:00:59.999Z",
        "2026-11-23T10:00:59.999999Z",
        "2026-11-23T10:01:00+00:00",
        "2026-11-23T11:00:00.5+01:00",
        "1969-12-31T23:59:59.999Z",
        "2026-11-23T10:59:59.1234Z",
      ];
      const plain = times.map((time, i) => ({ id: `b${i}`, time, principal: `p${i % 2}` }));
      await writeBatchIndex(sql, own, batchOf(plain, 0n), object("v-bins-1"));
      // PostgreSQL rounds to the microsecond: …59.9999995 is the next minute and hour there, not for Date.parse.
      const rounded = [
        { id: "r1", time: "2026-11-23T10:59:59.9999995Z", principal: "p0" },
        { id: "r2", time: "2026-11-23T10:00:00Z", principal: "p1" },
      ];
      await writeBatchIndex(sql, own, batchOf(rounded, 10n), object("v-bins-2"));
      for (const [table, bin, width] of [
        ["counts", "minute", "1 minute"],
        ["counts_hour", "hour", "1 hour"],
      ] as const) {
        const rolled = await sql.unsafe(
          `SELECT tenant_id, ${bin} AS bin, principal_id, action, result, n::int AS n FROM "${own}".${table}
          ORDER BY 1, 2, 3, 4, 5`,
        );
        const grouped = await sql.unsafe(
          `SELECT tenant_id, date_bin('${width}', time, '2000-01-01T00:00:00Z') AS bin, principal_id, action, result,
                count(*)::int AS n
           FROM "${own}".events JOIN "${own}".tenants USING (tenant_key) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
        );
        expect(rolled).toEqual(grouped);
      }
      const [{ n }] = await sql.unsafe(
        `SELECT n::int AS n FROM "${own}".counts WHERE minute = '2026-11-23T11:00:00Z' AND principal_id = 'p0'`,
      );
      expect(n).toBe(1); // r1, rounded up to 11:00 by PostgreSQL (Date.parse reads 10:59:59.999)
      // the principal postings too: r1 in the 11:00 posting (the text path's bin is PostgreSQL's)
      expect(await indexFacts(sql, own)).toMatchObject({ events: 8, posted: 8, strays: 0 });
    });
  });

  test("a batch of more than one COPY: the chunk holding an event indexed before goes in by statements", async () => {
    await withOwnSchema("index-large", async (own) => {
      const lines = Array.from({ length: 60_001 }, (_, i) => ({
        id: `big-${i}`,
        time: `2026-11-23T12:${String(Math.floor(i / 1000) % 60).padStart(2, "0")}:00.${String(i % 1000).padStart(3, "0")}Z`,
        principal: `p${i % 7}`,
      }));
      // an event of the second copy's chunk (events 50,000 on) indexed before, by an earlier object
      await writeBatchIndex(sql, own, batchOf([lines[55_555] as (typeof lines)[number]], 0n), object("v-large-1"));
      const result = await writeBatchIndex(sql, own, batchOf(lines, 1n), object("v-large-2"));
      expect(result.inserted).toBe(60_000);
      expect(await indexFacts(sql, own)).toEqual({
        events: 60_001,
        distinctIds: 60_001,
        counted: 60_001,
        posted: 60_001,
        strays: 0,
        objects: 2,
      });
      const [{ version }] = await sql.unsafe(
        `SELECT o.version_id AS version FROM "${own}".events e JOIN "${own}".objects o USING (object_id)
         WHERE e.id = 'big-55555'`,
      );
      expect(version).toBe("v-large-1");
      const [{ minutes }] = await sql.unsafe(`SELECT count(DISTINCT minute)::int AS minutes FROM "${own}".counts`);
      expect(minutes).toBe(60);
    });
  });

  test("every time is stored as PostgreSQL reads its text, copied as microseconds (1714–2285) or sent as text", async () => {
    await withOwnSchema("index-times", async (own) => {
      const copied = [
        "2026-11-23T10:00:00Z",
        "2026-11-23T10:00:00.1Z",
        "2026-11-23T10:00:00.12Z",
        "2026-11-23T10:00:00.123Z",
        "2026-11-23T10:00:00.1234Z",
        "2026-11-23T10:00:00.12345+05:30",
        "2026-11-23T10:00:00.123456-15:59",
        "1969-12-31T23:59:59.999500Z",
        "1970-01-01T00:00:00.000001Z",
        "1999-12-31T23:59:59.999999Z",
        "2000-01-01T00:00:00.000001Z",
        "1714-07-29T00:12:25.259009Z", // 2000 ± (2^53 − 1) µs: the first and last times the plain path copies
        "2285-06-04T23:47:34.740991Z",
      ];
      const asText = ["1714-07-29T00:12:25.259008Z", "2285-06-04T23:47:34.740993Z", "0001-01-01T00:00:00.000001+01:00"];
      const all: [string, string][] = [
        ...copied.map((time, i): [string, string] => [`e${i}`, time]),
        ...asText.map((time, i): [string, string] => [`l${i}`, time]),
      ];
      // one batch per time, so that a time the plain path refuses does not send the others as text
      for (const [i, [id, time]] of all.entries()) {
        await writeBatchIndex(sql, own, batchOf([{ id, time }], BigInt(i)), object(`v-t${i}`));
      }
      const stored = await sql.unsafe(
        `SELECT e.id, e.time = x.time::timestamptz AS same FROM "${own}".events e
         JOIN unnest($1::text[], $2::text[]) AS x(id, time) USING (id) ORDER BY e.id`,
        [`{${all.map(([id]) => id).join(",")}}`, `{${all.map(([, time]) => time).join(",")}}`],
      );
      expect(stored).toEqual(all.map(([id]) => ({ id, same: true })).sort((a, b) => (a.id < b.id ? -1 : 1)));
      // postings of times at the copy's limits (a minute's start beyond a safe integer) and of the text path
      expect(await indexFacts(sql, own)).toMatchObject({ events: all.length, posted: all.length, strays: 0 });
    });
  });

  test("index strings are stored exactly as the record holds them (quotes, backslashes, braces, NULL, empty)", async () => {
    const awkward = [
      'say "hi"',
      'back\\slash \\"',
      "{a,b}",
      "NULL",
      "",
      "  spaced  ",
      "é世😀",
      "tab\there",
      "a\u0000b",
    ];
    const lines = awkward.map((text, i) => {
      const value = JSON.parse(recordLine(`odd-${i}`, "tenant-odd", "2026-11-23T11:00:00Z"));
      return Buffer.from(JSON.stringify({ ...value, action: text, resource: `r/${text}`, principal_id: text }));
    });
    const batch = new PartitionBatch("topic.x", 1);
    lines.forEach((line, i) => {
      batch.add(line, BigInt(i), 0, 1);
    });
    const result = await writeBatchIndex(sql, schema, batch.seal(), object("v-odd"));
    expect(result.inserted).toBe(awkward.length);
    const rows = await sql.unsafe(
      `SELECT id, action, resource, principal_id FROM "${schema}".events
        WHERE tenant_key = (SELECT tenant_key FROM "${schema}".tenants WHERE tenant_id = 'tenant-odd') ORDER BY id`,
    );
    const stored = awkward.map((text) => text.replaceAll("\u0000", "\uFFFD"));
    expect(rows).toEqual(
      stored.map((text, i) => ({ id: `odd-${i}`, action: text, resource: `r/${text}`, principal_id: text })),
    );
    const [{ n }] = await sql.unsafe(
      `SELECT sum(n)::int AS n FROM "${schema}".counts_hour WHERE tenant_id = 'tenant-odd' AND hour = '2026-11-23T11:00:00Z'`,
    );
    expect(n).toBe(awkward.length);
  });

  test("a tenant id with a lone surrogate or a NUL is keyed as the index stores it (U+FFFD)", async () => {
    const batch = new PartitionBatch("topic.x", 1);
    for (const [i, tenant] of ["t\ud800", "t\u0000", "t\uFFFD"].entries()) {
      // JSON.stringify writes the lone surrogate as the escape `\ud800`: a valid record line
      const value = { ...JSON.parse(recordLine(`sur-${i}`, "x", "2026-11-23T12:00:00Z")), tenant_id: tenant };
      batch.add(Buffer.from(JSON.stringify(value)), BigInt(i), 0, 1);
    }
    const result = await writeBatchIndex(sql, schema, batch.seal(), object("v-surrogate"));
    expect(result.inserted).toBe(3);
    const rows = await sql.unsafe(
      `SELECT e.id, t.tenant_id FROM "${schema}".events e JOIN "${schema}".tenants t USING (tenant_key)
        WHERE e.id LIKE 'sur-%' ORDER BY e.id`,
    );
    expect(rows).toEqual(["sur-0", "sur-1", "sur-2"].map((id) => ({ id, tenant_id: "t\uFFFD" })));
  });

  test("the mark never goes back (a former owner finishing late)", async () => {
    await writeBatchIndex(sql, schema, batchOf([{ id: "late", time: "2026-11-23T09:02:00Z" }], 5n), object("v3"));
    const [mark] = await sql`SELECT indexed_through::int AS t FROM ${sql(`${schema}.marks`)} WHERE partition = 1`;
    expect(mark.t).toBe(13);
  });

  test("two writers meeting the same rollup rows in opposite orders both commit (rows taken in key order)", async () => {
    await withOwnSchema("index-lock-order", async (own) => {
      const at = "2026-11-23T10:00:0";
      await writeBatchIndex(
        sql,
        own,
        batchOf(
          [
            { id: "seed-1", time: `${at}0Z`, principal: "p1" },
            { id: "seed-2", time: `${at}0Z`, principal: "p2" },
          ],
          0n,
          0,
        ),
        object("v-seed"),
      );
      // Partition 1 meets p2 first, partition 2 meets p1 first; p2's rows are held by a third transaction until
      // both writers wait on a lock, so each writer has taken whatever it takes before p2.
      const pOneLast = batchOf(
        [
          { id: "a-1", time: `${at}1Z`, principal: "p2" },
          { id: "a-2", time: `${at}1Z`, principal: "p1" },
        ],
        0n,
        1,
      );
      const pOneFirst = batchOf(
        [
          { id: "b-1", time: `${at}2Z`, principal: "p1" },
          { id: "b-2", time: `${at}2Z`, principal: "p2" },
        ],
        0n,
        2,
      );
      const writers = new SQL({ url: addresses.pgUrl, max: 2 });
      const holder = new SQL({ url: addresses.pgUrl, max: 1 });
      try {
        let written: Promise<PromiseSettledResult<unknown>[]> | undefined;
        await holder.begin(async (tx) => {
          await tx.unsafe(`SELECT 1 FROM "${own}".counts_hour WHERE principal_id = 'p2' FOR UPDATE`);
          await tx.unsafe(`SELECT 1 FROM "${own}".counts WHERE principal_id = 'p2' FOR UPDATE`);
          written = Promise.allSettled([
            writeBatchIndex(writers, own, pOneLast, object("v-a")),
            writeBatchIndex(writers, own, pOneFirst, object("v-b")),
          ]);
          await waitFor(
            "both writers waiting on a lock",
            async () => {
              const [{ n }] = await sql.unsafe(
                `SELECT count(*)::int AS n FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
                [own],
              );
              return n === 2 ? true : undefined;
            },
            { timeoutMs: 10_000, intervalMs: 20 },
          );
        });
        const outcomes = await (written as Promise<PromiseSettledResult<unknown>[]>);
        expect(outcomes.map((outcome) => (outcome.status === "rejected" ? String(outcome.reason) : "ok"))).toEqual([
          "ok",
          "ok",
        ]);
        const counts = await sql.unsafe(`SELECT principal_id, n::int AS n FROM "${own}".counts ORDER BY principal_id`);
        expect(counts.map((row: { principal_id: string; n: number }) => [row.principal_id, row.n])).toEqual([
          ["p1", 3],
          ["p2", 3],
        ]);
        const hours = await sql.unsafe(
          `SELECT principal_id, n::int AS n FROM "${own}".counts_hour ORDER BY principal_id`,
        );
        expect(hours.map((row: { principal_id: string; n: number }) => [row.principal_id, row.n])).toEqual([
          ["p1", 3],
          ["p2", 3],
        ]);
      } finally {
        await writers.close();
        await holder.close();
      }
    });
  });

  test("postings arrays are compressed with lz4, in a new schema and in one whose columns were pglz", async () => {
    await withOwnSchema("index-lz4", async (own) => {
      const methods = async () =>
        (
          await sql.unsafe(
            `SELECT attname, attcompression::text AS method FROM pg_attribute
             WHERE attrelid = '"${own}".principal_events'::regclass AND attname IN ('ids', 'times') ORDER BY attname`,
          )
        ).map((row: { attname: string; method: string }) => `${row.attname}:${row.method}`);
      expect(await methods()).toEqual(["ids:l", "times:l"]);
      await sql.unsafe(
        `ALTER TABLE "${own}".principal_events ALTER COLUMN ids SET COMPRESSION pglz, ALTER COLUMN times SET COMPRESSION pglz`,
      );
      expect(await methods()).toEqual(["ids:p", "times:p"]);
      await ensureIndexSchema(sql, own);
      expect(await methods()).toEqual(["ids:l", "times:l"]);
      // one principal's minute of 200 events: a postings row past TOAST's threshold
      const lines = Array.from({ length: 200 }, (_, i) => ({
        id: `lz-${String(i).padStart(4, "0")}-${"x".repeat(24)}`,
        time: `2026-11-23T11:00:${String(Math.floor(i / 4)).padStart(2, "0")}.${String(i % 4).padStart(3, "0")}Z`,
        principal: "p-lz",
      }));
      await writeBatchIndex(sql, own, batchOf(lines, 0n), object("v-lz4"));
      const [row] = await sql.unsafe(
        `SELECT pg_column_compression(ids) AS ids, cardinality(ids)::int AS n FROM "${own}".principal_events`,
      );
      expect(row).toEqual({ ids: "lz4", n: 200 });
    });
  });

  test("a schema that does not exist fails for good (not retried)", async () => {
    const error = await rejectionOf(
      writeBatchIndex(sql, `${schema}_missing`, batchOf([{ id: "x", time: "2026-11-23T09:02:00Z" }], 1n), object("v")),
      QueueConsumerError,
    );
    expect(error.code).toBe("QUEUE_CONSUMER_INDEX_FAILED");
    expect(error.canRetry).toBe(false);
  });

  test("an index row past the B-tree's limit (an id far beyond the record schema's 128) stops the writer: 54000, not retried", async () => {
    // Random characters: a repeated one would be compressed under the limit.
    const id = Array.from({ length: 3_000 }, () => String.fromCharCode(33 + Math.floor(Math.random() * 90))).join("");
    const error = await rejectionOf(
      writeBatchIndex(sql, schema, batchOf([{ id, time: "2026-11-23T09:03:00Z" }], 5_000n), object("v-long-id")),
      QueueConsumerError,
    );
    expect(error.code).toBe("QUEUE_CONSUMER_INDEX_FAILED");
    expect((error.cause as SQL.PostgresError).errno).toBe("54000");
    expect(error.canRetry).toBe(false);
  });

  test("a server that hangs up is retried", async () => {
    const listener = hangUpListener();
    // Bun's pool dials again until its connectionTimeout (s) is spent.
    const down = new SQL({ url: listener.url.replace("http:", "postgres:"), max: 1, connectionTimeout: 1 });
    try {
      const error = await rejectionOf(
        writeBatchIndex(down, schema, batchOf([{ id: "x", time: "2026-11-23T09:04:00Z" }], 1n), object("v-down")),
        QueueConsumerError,
      );
      expect(error.code).toBe("QUEUE_CONSUMER_INDEX_FAILED");
      expect((error.cause as SQL.PostgresError).code).toStartWith("ERR_POSTGRES_CONNECTION_");
      expect(error.canRetry).toBe(true);
    } finally {
      await down.close();
      listener.stop();
    }
  });

  test("a bad schema name is refused before any SQL", async () => {
    const error = await rejectionOf(ensureIndexSchema(sql, 'bad"name'), QueueConsumerError);
    expect(error.code).toBe("QUEUE_CONSUMER_SCHEMA_FAILED");
  });

  test("a version 1 schema is migrated: events keyed on (tenant_id, time, id), the twin index gone, rows kept", async () => {
    const old = `${schema}_v1`;
    const events = `"${old}".events`;
    await sql.unsafe(`CREATE SCHEMA "${old}"`);
    await sql.unsafe(
      `CREATE TABLE "${old}".schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    await sql.unsafe(`INSERT INTO "${old}".schema_migrations (version) VALUES (1)`);
    await sql.unsafe(`CREATE TABLE ${events} (id text PRIMARY KEY, tenant_id text NOT NULL, time timestamptz NOT NULL,
      principal_id text NOT NULL, action text NOT NULL, result text NOT NULL, resource text NOT NULL,
      object_id bigint NOT NULL, byte_start bigint NOT NULL, byte_length int NOT NULL)`);
    await sql.unsafe(`CREATE INDEX events_tenant_time ON ${events} (tenant_id, time, id)`);
    await sql.unsafe(
      `INSERT INTO ${events} VALUES ('old-1', 'tenant-a', '2026-11-23T08:00:00Z', 'p', 'a', 'OK', 'r', 1, 0, 10)`,
    );
    try {
      await ensureIndexSchema(sql, old);
      const indexes =
        await sql`SELECT indexname FROM pg_indexes WHERE schemaname = ${old} AND tablename = 'events' ORDER BY 1`;
      expect(indexes.map((r: { indexname: string }) => r.indexname)).toEqual(["events_tenant_time_id"]);
      const versions = await sql.unsafe(`SELECT version FROM "${old}".schema_migrations ORDER BY 1`);
      expect(versions.map((r: { version: number }) => r.version)).toEqual([1, 6]);
      const result = await writeBatchIndex(
        sql,
        old,
        batchOf([{ id: "new-1", time: "2026-11-23T09:03:00Z" }], 1n),
        object("migrated"),
      );
      expect(result.inserted).toBe(1);
      expect(await indexFacts(sql, old)).toMatchObject({ events: 2, posted: 2, strays: 0 });
    } finally {
      await dropSchema(sql, old);
    }
  });

  test("a version 2 schema is migrated: counts_hour filled from counts, then kept by the writer", async () => {
    const old = `${schema}_v2`;
    await ensureIndexSchema(sql, old);
    await backToVersion5Events(sql, old);
    await sql.unsafe(`DROP TABLE "${old}".counts_hour`);
    await recordVersion(sql, old, 2);
    await sql.unsafe(`INSERT INTO "${old}".counts (tenant_id, minute, principal_id, action, result, n) VALUES
      ('tenant-a', '2026-11-23T08:00:00Z', 'p', 'a', 'OK', 2),
      ('tenant-a', '2026-11-23T08:59:00Z', 'p', 'a', 'OK', 3),
      ('tenant-a', '2026-11-23T08:59:00Z', 'p', 'a', 'DENIED', 1),
      ('tenant-a', '2026-11-23T09:00:00Z', 'p', 'a', 'OK', 4),
      ('tenant-b', '2026-11-23T08:30:00Z', 'p', 'a', 'OK', 5)`);
    try {
      await ensureIndexSchema(sql, old);
      const versions = await sql.unsafe(`SELECT version FROM "${old}".schema_migrations ORDER BY 1`);
      expect(versions.map((r: { version: number }) => r.version)).toEqual([2, 6]);
      const hours = async () =>
        (
          await sql.unsafe(`SELECT tenant_id, hour, result, n::int AS n FROM "${old}".counts_hour ORDER BY 1, 2, 3`)
        ).map((r: { tenant_id: string; hour: Date; result: string; n: number }) => [
          r.tenant_id,
          r.hour.toISOString(),
          r.result,
          r.n,
        ]);
      expect(await hours()).toEqual([
        ["tenant-a", "2026-11-23T08:00:00.000Z", "DENIED", 1],
        ["tenant-a", "2026-11-23T08:00:00.000Z", "OK", 5],
        ["tenant-a", "2026-11-23T09:00:00.000Z", "OK", 4],
        ["tenant-b", "2026-11-23T08:00:00.000Z", "OK", 5],
      ]);
      // At version 6 a second start copies nothing again.
      await ensureIndexSchema(sql, old);
      expect((await hours()).length).toBe(4);
      const [{ n }] = await sql.unsafe(`SELECT sum(n)::int AS n FROM "${old}".counts_hour`);
      expect(n).toBe(15);
    } finally {
      await dropSchema(sql, old);
    }
  });

  test("a version 4 schema is migrated: principal postings filled from its events, the principal B-tree gone", async () => {
    const old = `${schema}_v4`;
    await ensureIndexSchema(sql, old);
    // back to version 4: events keyed on the tenant's text, no postings, no writer check, the principal B-tree
    await backToVersion5Events(sql, old);
    await sql.unsafe(`DROP TRIGGER events_writer_version ON "${old}".events`);
    await sql.unsafe(`DROP FUNCTION "${old}".events_writer_version()`);
    await sql.unsafe(`DROP TABLE "${old}".principal_events`);
    await sql.unsafe(
      `CREATE INDEX events_tenant_principal_time ON "${old}".events (tenant_id, principal_id, time, id)`,
    );
    await recordVersion(sql, old, 4);
    await sql.unsafe(`INSERT INTO "${old}".events VALUES
      ('a2', 'tenant-a', '2026-11-23T08:00:30Z', 'p1', 'a', 'OK', 'r', 1, 0, 10),
      ('a1', 'tenant-a', '2026-11-23T08:00:30Z', 'p1', 'a', 'OK', 'r', 1, 11, 10),
      ('a3', 'tenant-a', '2026-11-23T08:01:00Z', 'p1', 'a', 'OK', 'r', 1, 22, 10),
      ('b1', 'tenant-a', '2026-11-23T08:00:00Z', 'p2', 'a', 'OK', 'r', 1, 33, 10),
      ('c1', 'tenant-b', '2026-11-23T08:00:59.999999Z', 'p1', 'a', 'OK', 'r', 1, 44, 10)`);
    const postings = async () =>
      (
        await sql.unsafe(`SELECT tenant_id, principal_id, minute, ids FROM "${old}".principal_events ORDER BY 1, 2, 3`)
      ).map((r: { tenant_id: string; principal_id: string; minute: Date; ids: string[] }) => [
        r.tenant_id,
        r.principal_id,
        r.minute.toISOString(),
        r.ids,
      ]);
    try {
      await ensureIndexSchema(sql, old);
      const versions = await sql.unsafe(`SELECT version FROM "${old}".schema_migrations ORDER BY 1`);
      expect(versions.map((r: { version: number }) => r.version)).toEqual([4, 6]);
      const indexes =
        await sql`SELECT indexname FROM pg_indexes WHERE schemaname = ${old} AND tablename = 'events' ORDER BY 1`;
      expect(indexes.map((r: { indexname: string }) => r.indexname)).toEqual(["events_tenant_time_id"]);
      const filled = [
        ["tenant-a", "p1", "2026-11-23T08:00:00.000Z", ["a1", "a2"]],
        ["tenant-a", "p1", "2026-11-23T08:01:00.000Z", ["a3"]],
        ["tenant-a", "p2", "2026-11-23T08:00:00.000Z", ["b1"]],
        ["tenant-b", "p1", "2026-11-23T08:00:00.000Z", ["c1"]],
      ];
      expect(await postings()).toEqual(filled);
      await ensureIndexSchema(sql, old); // at version 6: nothing filled twice
      expect(await postings()).toEqual(filled);
      await writeBatchIndex(sql, old, batchOf([{ id: "n1", time: "2026-11-23T09:03:00Z" }], 1n), object("v4-new"));
      expect(await indexFacts(sql, old)).toMatchObject({ events: 6, posted: 6, strays: 0 });
    } finally {
      await dropSchema(sql, old);
    }
  });

  test("events inserted without the writer's version setting are refused (a version 4 writer after the migration)", async () => {
    await withOwnSchema("index-guard", async (own) => {
      const row = `(1, 10, '2026-11-23T08:00:00Z', 1, 0, 'g1', 'p', 'a', 'OK', 'r')`;
      const insert = `INSERT INTO "${own}".events VALUES ${row}`;
      const refused = await rejectionOf(sql.unsafe(insert), Error);
      expect((refused as { errno?: unknown }).errno).toBe(WRITER_VERSION_REFUSED);
      expect(refused.message).toContain("schema version 5 or later");
      // a COPY, as the version 4 writer sends its rows, is refused the same way
      const copied = await rejectionOf(
        sql.begin(async (tx) => {
          const writer = tx.unsafe(`COPY "${own}".events FROM STDIN`).writable().getWriter();
          await writer.write(Buffer.from("1\t10\t2026-11-23T08:00:00Z\t1\t0\tg2\tp\ta\tOK\tr\n"));
          await writer.close();
        }),
        Error,
      );
      expect((copied as { errno?: unknown }).errno).toBe(WRITER_VERSION_REFUSED);
      for (const setting of ["4", "", "5x"]) {
        const older = await rejectionOf(
          sql.begin(async (tx) => {
            await tx`SELECT set_config('svc_audit.index_version', ${setting}, true)`;
            await tx.unsafe(insert);
          }),
          Error,
        );
        expect((older as { errno?: unknown }).errno).toBe(WRITER_VERSION_REFUSED);
      }
      await sql.begin(async (tx) => {
        await tx`SELECT set_config('svc_audit.index_version', '5', true)`;
        await tx.unsafe(insert);
      });
      const [{ n }] = await sql.unsafe(`SELECT count(*)::int AS n FROM "${own}".events`);
      expect(n).toBe(1);
    });
  });

  test("a schema newer than this program is refused for good, untouched", async () => {
    const newer = `${schema}_v9`;
    await sql.unsafe(`CREATE SCHEMA "${newer}"`);
    await sql.unsafe(
      `CREATE TABLE "${newer}".schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    await sql.unsafe(`INSERT INTO "${newer}".schema_migrations (version) VALUES (9)`);
    try {
      const error = await rejectionOf(ensureIndexSchema(sql, newer), QueueConsumerError);
      expect(error.code).toBe("QUEUE_CONSUMER_SCHEMA_FAILED");
      expect(error.canRetry).toBe(false);
      expect(error.message).toContain("version 9");
      const [{ present }] = await sql.unsafe(`SELECT to_regclass('"${newer}".events') IS NOT NULL AS present`);
      expect(present).toBe(false);
    } finally {
      await dropSchema(sql, newer);
    }
  });
});

describe("canRetryIndex", () => {
  const server = (errno: string) =>
    new SQL.PostgresError(`SQLSTATE ${errno}`, { code: "ERR_POSTGRES_SERVER_ERROR", errno });
  const bun = (code: string) => new SQL.PostgresError(code, { code });
  const cases: [what: string, error: unknown, canRetry: boolean][] = [
    ["40001 serialization failure", server("40001"), true],
    ["40P01 deadlock", server("40P01"), true],
    ["08006 connection failure", server("08006"), true],
    ["53300 too many connections", server("53300"), true],
    ["53100 disk full", server("53100"), true],
    ["57P01 admin shutdown", server("57P01"), true],
    ["57014 statement cancelled", server("57014"), true],
    ["58030 I/O error", server("58030"), true],
    ["55P03 lock not available", server("55P03"), true],
    ["25006 read-only transaction (a failed-over primary)", server("25006"), true],
    ["25P03 idle-in-transaction timeout", server("25P03"), true],
    [
      "the server's name not resolving while its pod restarts",
      Object.assign(new Error("getaddrinfo ENOTFOUND pg"), { code: "ENOTFOUND" }),
      true,
    ],
    ["connection closed", bun("ERR_POSTGRES_CONNECTION_CLOSED"), true],
    ["connection refused", bun("ERR_POSTGRES_CONNECTION_REFUSED"), true],
    ["connection timeout", bun("ERR_POSTGRES_CONNECTION_TIMEOUT"), true],
    ["a socket's ECONNRESET", Object.assign(new Error("read ECONNRESET"), { errno: -104, code: "ECONNRESET" }), true],
    [
      "a retriable QueueConsumerError",
      new QueueConsumerError("QUEUE_CONSUMER_INDEX_FAILED", "x", { canRetry: true }),
      true,
    ],
    ["54000 index row too large", server("54000"), false],
    ["22008 datetime out of range", server("22008"), false],
    ["23514 check violation", server("23514"), false],
    ["42P01 undefined table", server("42P01"), false],
    ["XX000 internal error", server("XX000"), false],
    ["55006 object in use", server("55006"), false],
    ["authentication failed", bun("ERR_POSTGRES_AUTHENTICATION_FAILED_PBKDF"), false],
    ["an unsafe transaction", bun("ERR_POSTGRES_UNSAFE_TRANSACTION"), false],
    ["ERR_OUT_OF_RANGE", Object.assign(new RangeError("offset out of range"), { code: "ERR_OUT_OF_RANGE" }), false],
    ["an error without a code", new Error("boom"), false],
    ["not an error", "boom", false],
    ["null", null, false],
    ["a QueueConsumerError that says no", new QueueConsumerError("QUEUE_CONSUMER_TENANT_KEY_MISSING", "x"), false],
  ];
  for (const [what, error, canRetry] of cases) {
    test(`${what}: ${canRetry ? "retried" : "not retried"}`, () => {
      expect(canRetryIndex(error)).toBe(canRetry);
    });
  }
});
