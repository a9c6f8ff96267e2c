import { Admin, Producer } from "@platformatic/kafka";
import { randomName, stackEnv } from "@svc/testkit";
import { pino } from "pino";
import { parseAuditApiConfig, startAuditApi } from "../index.ts";
import { quantile } from "./quantile.ts";

export interface FreshnessOptions {
  rate: number;
  seconds: number;
  /** The API's settings (the bench's replica's); the tail's topic and a larger page are set here. */
  apiEnv: Record<string, string>;
  tenant: string;
  bearer: string;
}

export interface FreshnessResult {
  samples: number;
  missing: number;
  p50: number;
  p99: number;
  max: number;
  /** Records produced per second, as achieved. */
  achieved: number;
}

const PROBE_EVERY = 100;

/**
 * Freshness under load: records produced to a topic of its own at `rate` per second (the producer stands in for
 * the agent; each record's `time` is when it was handed to the producer), an API replica with the tail on that
 * topic, and a poller asking `list_events` (REST, auth on) every 20 ms for the probe records (1 in 100, their own
 * principal): written → first listed, per probe.
 */
export async function measureFreshness(options: FreshnessOptions): Promise<FreshnessResult> {
  const stack = stackEnv();
  const topic = randomName("bench-api-fresh");
  const admin = new Admin({ clientId: "bench-api", bootstrapBrokers: stack.kafkaBrokers });
  await admin.createTopics({ topics: [topic], partitions: 6, replicas: 1 });
  const producer = new Producer({ clientId: "bench-api", bootstrapBrokers: stack.kafkaBrokers, acks: -1 });
  const api = await startAuditApi(
    parseAuditApiConfig({
      ...options.apiEnv,
      SVC_AUDIT_API_MAX_PAGE_SIZE: "10000",
      SVC_AUDIT_KAFKA_BROKERS: stack.kafkaBrokers.join(","),
      SVC_AUDIT_TOPIC: topic,
    }),
    { logger: pino({ level: "silent" }) },
  );
  const written = new Map<string, number>();
  const seen = new Map<string, number>();
  const start = Date.now();
  const from = new Date(start - 60_000).toISOString();
  let producing = true;
  let produced = 0;
  const poller = (async () => {
    while (producing || seen.size < written.size) {
      const response = await fetch(`http://127.0.0.1:${api.restPort}/v2/audit/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-tenant-id": options.tenant, authorization: options.bearer },
        body: JSON.stringify({
          start_time: from,
          end_time: new Date(Date.now() + 60_000).toISOString(),
          principal_id: "svc-probe",
          page_size: 10_000,
        }),
      });
      const now = performance.now();
      const body = (await response.json()) as { events: { id: string }[] };
      for (const event of body.events) if (!seen.has(event.id)) seen.set(event.id, now);
      if (!producing && Date.now() - start > (options.seconds + 10) * 1000) break;
      await Bun.sleep(20);
    }
  })();
  try {
    const tickMs = 10;
    const perTick = Math.max(1, Math.round((options.rate * tickMs) / 1000));
    const end = performance.now() + options.seconds * 1000;
    let next = performance.now();
    let i = 0;
    while (performance.now() < end) {
      const messages = [];
      for (let k = 0; k < perTick; k++, i++) {
        const probe = i % PROBE_EVERY === 0;
        const id = `${probe ? "probe" : "ev"}-${String(i).padStart(9, "0")}`;
        const record = {
          id,
          time: new Date().toISOString(),
          source: "endpoint",
          action: "/svc.Endpoint/Search",
          resource: "index/products",
          result: "OK",
          duration_ms: 1,
          claimed_tenant_id: options.tenant,
          principal_id: probe ? "svc-probe" : "svc-app",
          tenant_id: options.tenant,
        };
        if (probe) written.set(id, performance.now());
        messages.push({ topic, key: Buffer.from(options.tenant), value: Buffer.from(JSON.stringify(record)) });
      }
      void producer.send({ messages }).then(() => {
        produced += messages.length;
      });
      next += tickMs;
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
    }
    producing = false;
    await poller;
  } finally {
    producing = false;
    await api.stop();
    await producer.close();
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    await admin.close();
  }
  const latencies = [...written].flatMap(([id, at]) => {
    const when = seen.get(id);
    return when === undefined ? [] : [when - at];
  });
  return {
    samples: latencies.length,
    missing: written.size - latencies.length,
    p50: quantile(latencies, 50),
    p99: quantile(latencies, 99),
    max: quantile(latencies, 100),
    achieved: produced / options.seconds,
  };
}
