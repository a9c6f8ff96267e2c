/**
 * Freshness (docs/audit-storage.md, "Freshness"): records above `marks.indexed_through` are answered from the
 * topic's tail, merged with the index — on a topic of this file (real Kafka), an index schema and key prefix of its
 * own (real PostgreSQL and MinIO), no writer running: a batch is indexed by the test, through the writer's own path,
 * when the test says so.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Admin, Producer } from "@platformatic/kafka";
import { waitFor } from "@svc/common";
import { hangUpListener, stackEnv, topicName } from "@svc/testkit";
import { pino } from "pino";
import { type AuditApi, microTime, parseAuditApiConfig, startAuditApi } from "../index.ts";
import {
  AUTH_DISABLED,
  apiEnv,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const storage = testStorage("fresh");
const { names, sql, s3 } = storage;
const topic = topicName("api-fresh");
const TENANT = "tenant-fresh";
const T0 = Date.parse("2026-08-08T08:00:00.250Z");
const RANGE = { start_time: "2026-08-08T00:00:00Z", end_time: "2026-08-09T00:00:00Z" };

let producer: Producer<Buffer, Buffer, Buffer, Buffer>;
let api: AuditApi;
/** What each partition holds, in offset order (the test is the only producer). */
const partitions: TestRecord[][] = [[], []];

const brokers = () => stackEnv().kafkaBrokers;

async function produce(partition: number, records: TestRecord[]): Promise<void> {
  await producer.send({
    messages: records.map((r) => ({
      topic,
      partition,
      key: Buffer.from(r.tenant_id),
      value: Buffer.from(JSON.stringify(r)),
      // Now, not the record's time (2026-08-08): a CreateTime older than the broker's time retention (24 h on the
      // stack) lets its next check delete the records before the tail reads them.
      timestamp: BigInt(Date.now()),
    })),
  });
  partitions[partition]?.push(...records);
}

/** The records the API must answer: the tenant's of every partition, one per (time, id), in (time, id) order. */
function expected(): TestRecord[] {
  const byKey = new Map<string, TestRecord>();
  for (const record of partitions.flat().filter((r) => r.tenant_id === TENANT)) {
    const key = `${microTime(record.time)}|${record.id}`;
    if (!byKey.has(key)) byKey.set(key, record);
  }
  return [...byKey.values()].sort((a, b) =>
    Date.parse(a.time) !== Date.parse(b.time) ? Date.parse(a.time) - Date.parse(b.time) : a.id < b.id ? -1 : 1,
  );
}

async function list(body: Record<string, unknown>, on: AuditApi = api) {
  const response = await fetch(`http://127.0.0.1:${on.restPort}/v2/audit/events`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-tenant-id": TENANT },
    body: JSON.stringify({ ...RANGE, ...body }),
  });
  if (response.status !== 200) throw new Error(`list: ${response.status} ${await response.text()}`);
  return (await response.json()) as { total_count: number; events: TestRecord[]; next_page_token: string };
}

async function allPages(pageSize: number, on: AuditApi = api): Promise<{ total: number; ids: string[] }> {
  const ids: string[] = [];
  let token = "";
  let total = -1;
  for (let i = 0; i < 100; i++) {
    const page = await list({ page_size: pageSize, ...(token ? { page_token: token } : {}) }, on);
    if (total === -1) total = page.total_count;
    expect(page.total_count).toBe(total);
    ids.push(...page.events.map((e) => e.id));
    token = page.next_page_token;
    if (!token) break;
  }
  return { total, ids };
}

async function exported(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${api.restPort}/v2/audit/events/export`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-tenant-id": TENANT },
    body: JSON.stringify(RANGE),
  });
  expect(response.status).toBe(200);
  return response.text();
}

const lines = (records: readonly TestRecord[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");
const visible = (count: number) => async () => ((await list({ page_size: 1 })).total_count >= count ? true : undefined);

beforeAll(async () => {
  const admin = new Admin({ clientId: "api-fresh-admin", bootstrapBrokers: brokers() });
  try {
    await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 });
  } finally {
    await admin.close();
  }
  producer = new Producer({ clientId: "api-fresh", bootstrapBrokers: brokers(), acks: -1, retries: true });
  await storage.create();
  // Partition 0: 30 records, the first 20 indexed (mark 19). Partition 1: 10 records, none indexed (no mark).
  // Ties: partition 1's records share times with partition 0's, so the id orders them across the seam.
  await produce(
    0,
    Array.from({ length: 30 }, (_, i) => sampleRecord(`p0-${String(i).padStart(3, "0")}`, TENANT, T0 + i * 1_000)),
  );
  await produce(
    1,
    Array.from({ length: 10 }, (_, i) => sampleRecord(`p1-${String(i).padStart(3, "0")}`, TENANT, T0 + i * 3_000)),
  );
  await produce(1, [sampleRecord("other-1", "tenant-other", T0 + 500)]);
  await storeBatch(sql, s3, names, sealBatch(topic, 0, 0n, partitions[0]?.slice(0, 20) ?? []));
  api = await startAuditApi(
    parseAuditApiConfig(
      apiEnv(names.schema, {
        ...AUTH_DISABLED,
        SVC_AUDIT_KAFKA_BROKERS: stackEnv().kafkaBrokers.join(","),
        SVC_AUDIT_TOPIC: topic,
        SVC_AUDIT_API_TAIL_REFRESH_MS: "100",
      }),
    ),
    { logger: pino({ level: "silent" }) },
  );
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await producer?.close();
  const admin = new Admin({ clientId: "api-fresh-admin", bootstrapBrokers: brokers() });
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.close();
  await storage.remove();
});

test("records above the mark are served from the tail: every record once, in order, across the seam", async () => {
  await waitFor("the tail's records", visible(40), { timeoutMs: 20_000, intervalMs: 50 });
  // The tail holds partition 0's records 20..29 and all of partition 1 (no mark) — the other tenant's too.
  expect(api.tail?.size).toBe(21);
  const { total, ids } = await allPages(7);
  expect(total).toBe(40);
  expect(ids).toEqual(expected().map((r) => r.id));
  expect(await exported()).toBe(lines(expected()));
  const filtered = await list({ page_size: 100, principal_id: "svc-app", resource_prefix: "index/" });
  expect(filtered.total_count).toBe(40);
  expect((await list({ page_size: 100, result: "PERMISSION_DENIED" })).total_count).toBe(0);
});

test("a duplicate shipment (an indexed id and a tail id again, at new offsets) is counted once", async () => {
  const p0 = partitions[0] as TestRecord[];
  await produce(0, [p0[5] as TestRecord, p0[25] as TestRecord, sampleRecord("p0-sentinel", TENANT, T0 + 90_000)]);
  await waitFor("the sentinel", visible(41), { timeoutMs: 20_000, intervalMs: 50 });
  const { total, ids } = await allPages(9);
  expect(total).toBe(41);
  expect(ids).toEqual(expected().map((r) => r.id));
});

test("the tail's batch indexed meanwhile: counted once while a tail still holds it, then dropped; old tokens go on", async () => {
  // A replica whose marks refresh is far off keeps the records in its tail after they are indexed.
  const frozen = await startAuditApi(
    parseAuditApiConfig(
      apiEnv(names.schema, {
        ...AUTH_DISABLED,
        SVC_AUDIT_KAFKA_BROKERS: stackEnv().kafkaBrokers.join(","),
        SVC_AUDIT_TOPIC: topic,
        SVC_AUDIT_API_TAIL_REFRESH_MS: "60000",
      }),
    ),
    { logger: pino({ level: "silent" }) },
  );
  try {
    // Partition 0's offsets 20..32 and all of partition 1 (11).
    await waitFor("the frozen tail", async () => (frozen.tail?.size === 24 ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 20,
    });
    const before = await list({ page_size: 25 });
    expect(before.total_count).toBe(41);
    const p0 = partitions[0] as TestRecord[];
    // The writer's path for offsets 20..32 of partition 0 (the two duplicates are not indexed again).
    expect(await storeBatch(sql, s3, names, sealBatch(topic, 0, 20n, p0.slice(20)))).toBe(11);
    const during = await allPages(25, frozen);
    expect(frozen.tail?.size).toBe(24);
    expect(during.total).toBe(41);
    expect(during.ids).toEqual(expected().map((r) => r.id));
    await waitFor("the tail to drop partition 0", async () => (api.tail?.size === 11 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(await allPages(25)).toEqual(during);
    // A token issued while its position was a tail record continues on the index.
    const rest = await list({ page_size: 100, page_token: before.next_page_token });
    expect([...before.events, ...rest.events].map((e) => e.id)).toEqual(expected().map((r) => r.id));
    expect(await exported()).toBe(lines(expected()));
  } finally {
    await frozen.stop();
  }
});

test("a record written a moment ago is found before any writer flushed it", async () => {
  const now = sampleRecord("p1-just-now", TENANT, Date.now(), { result: "PERMISSION_DENIED" });
  const range = {
    start_time: new Date(Date.now() - 60_000).toISOString(),
    end_time: new Date(Date.now() + 60_000).toISOString(),
  };
  const written = performance.now();
  await produce(1, [now]);
  const found = await waitFor(
    "the new record",
    async () => {
      const page = await list({ ...range, result: "PERMISSION_DENIED", page_size: 10 });
      return page.events.find((e) => e.id === now.id);
    },
    { timeoutMs: 10_000, intervalMs: 10 },
  );
  expect(found).toEqual(now);
  console.info(`freshness: written → listed in ${(performance.now() - written).toFixed(0)} ms (not asserted)`);
  const marks = (await sql.unsafe(`SELECT count(*)::int AS n FROM "${names.schema}".marks WHERE partition = 1`)) as {
    n: number;
  }[];
  expect(marks[0]?.n).toBe(0);
});

test("Kafka unreachable: the API starts and answers from the index alone, exactly", async () => {
  // A broker address that accepts and hangs up: "Kafka not answering" without dialling a port someone may hold.
  const noKafka = hangUpListener();
  const cut = await startAuditApi(
    parseAuditApiConfig(
      apiEnv(names.schema, {
        ...AUTH_DISABLED,
        SVC_AUDIT_KAFKA_BROKERS: new URL(noKafka.url).host,
        SVC_AUDIT_TOPIC: topic,
      }),
    ),
    { logger: pino({ level: "silent" }) },
  );
  try {
    const rows = (await sql.unsafe(
      `SELECT count(*)::int AS n FROM "${names.schema}".events JOIN "${names.schema}".tenants USING (tenant_key)
        WHERE tenant_id = $1`,
      [TENANT],
    )) as { n: number }[];
    const answer = await list({ page_size: 100 }, cut);
    expect(answer.total_count).toBe(rows[0]?.n as number);
    expect(answer.events).toHaveLength(rows[0]?.n as number);
    expect(cut.tail?.size).toBe(0);
  } finally {
    await cut.stop();
    noKafka.stop();
  }
});
