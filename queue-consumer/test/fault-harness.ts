import { afterAll, afterEach, beforeAll } from "bun:test";
import { type PrivateServers, startPrivateServers } from "@svc/testkit";
import { SQL } from "bun";
import { type QueueConsumer, startConsumer } from "../index.ts";
import {
  type Addresses,
  consumerConfig,
  createTopic,
  deleteTopic,
  dropSchema,
  stackAddresses,
  type TestNames,
  TestProducer,
  testNames,
} from "./helpers.ts";

/**
 * What a private server takes over from the shared stack. The private stack's env names every server's address,
 * started or not, so only these are taken from it.
 */
const OWN_ADDRESSES = {
  kafka: ["brokers"],
  minio: ["s3Endpoint", "s3Region", "s3AccessKey", "s3SecretKey"],
} as const satisfies Record<string, readonly (keyof Addresses)[]>;
type FaultService = keyof typeof OWN_ADDRESSES;

export interface FaultHarness {
  /** The private servers the test stops and starts again. */
  readonly server: PrivateServers;
  readonly sql: SQL;
  readonly producer: TestProducer;
  /** A consumer on a fresh 6-partition topic and schema (removed after the file), logging errors only. */
  consumerFor(purpose: string, extra?: Record<string, string>): Promise<{ names: TestNames; consumer: QueueConsumer }>;
  /** A fresh 6-partition topic and schema for a writer the test runs itself (a child process), removed after. */
  namesFor(purpose: string): Promise<TestNames>;
  /** Another consumer on the topic, schema and group of `consumerFor`'s (a replica, or its next start). */
  consumerOn(names: TestNames, extra?: Record<string, string>): Promise<QueueConsumer>;
}

/**
 * For a `describeWithServers` block: `services` in a private stack of the test's own (the shared stack for the
 * rest), a producer and an index connection; after the block, its consumers stop and their topics, schemas and
 * the private stack are removed.
 */
export function faultHarness(services: readonly FaultService[]): FaultHarness {
  const shared = stackAddresses();
  const sql = new SQL({ url: shared.pgUrl, max: 2 });
  let server: PrivateServers | undefined;
  let addresses: Addresses | undefined;
  let producer: TestProducer | undefined;
  const schemas: string[] = [];
  const topics: string[] = [];
  const consumers: QueueConsumer[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the fault harness is used before its beforeAll ran");
    return value;
  };

  // Whether a test stopped the servers and has not started them again (it failed in between): the next test must not
  // find them down, so each test's end starts them again.
  let stopped = false;
  beforeAll(async () => {
    const real = await startPrivateServers(services);
    server = {
      ...real,
      async stop() {
        stopped = true;
        await real.stop();
      },
      async start() {
        await real.start();
        stopped = false;
      },
    };
    const own = stackAddresses(server.env);
    addresses = { ...shared };
    for (const service of services) for (const key of OWN_ADDRESSES[service]) addresses[key] = own[key];
    producer = new TestProducer(addresses.brokers);
  }, 120_000);

  afterEach(async () => {
    if (stopped) await server?.start();
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(consumers.map((c) => c.stop()));
    await producer?.close().catch(() => {});
    if (addresses) for (const topic of topics) await deleteTopic(addresses.brokers, topic);
    for (const schema of schemas) await dropSchema(sql, schema);
    await sql.close();
    await server?.remove();
  }, 120_000);

  const namesFor = async (purpose: string): Promise<TestNames> => {
    const at = started(addresses);
    const names = testNames(purpose);
    schemas.push(names.schema);
    topics.push(names.topic);
    await createTopic(at.brokers, names.topic, 6);
    return names;
  };

  const consumerOn = async (names: TestNames, extra: Record<string, string> = {}): Promise<QueueConsumer> => {
    const at = started(addresses);
    const consumer = await startConsumer(consumerConfig(at, names, { SVC_AUDIT_LOG_LEVEL: "error", ...extra }));
    consumers.push(consumer);
    return consumer;
  };

  return {
    get server() {
      return started(server);
    },
    sql,
    get producer() {
      return started(producer);
    },
    namesFor,
    async consumerFor(purpose, extra = {}) {
      const names = await namesFor(purpose);
      return { names, consumer: await consumerOn(names, extra) };
    },
    consumerOn,
  };
}
