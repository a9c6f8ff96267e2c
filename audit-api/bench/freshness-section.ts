import { join } from "node:path";
import { Admin } from "@platformatic/kafka";
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
 * Freshness under load: records produced to a topic of its own at `rate` per second by a process of its own
 * (freshness-producer.ts, standing in for the agent, which is another process in production: this process's
 * JavaScript thread runs only the API and the poller), an API replica with the tail on that topic, and a poller
 * asking `list_events` (REST, auth on) every 20 ms for the probe records (1 in 100, their own principal): written
 * (the probe's `time`, when it was handed to the producer) → first listed, per probe, in epoch ms.
 */
export async function measureFreshness(options: FreshnessOptions): Promise<FreshnessResult> {
  const stack = stackEnv();
  const topic = randomName("bench-api-fresh");
  const admin = new Admin({ clientId: "bench-api", bootstrapBrokers: stack.kafkaBrokers });
  await admin.createTopics({ topics: [topic], partitions: 6, replicas: 1 });
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
  let producerCpuMs = 0;
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
      const now = Date.now();
      const body = (await response.json()) as { events: { id: string }[] };
      for (const event of body.events) if (!seen.has(event.id)) seen.set(event.id, now);
      if (!producing && Date.now() - start > (options.seconds + 10) * 1000) break;
      await Bun.sleep(20);
    }
  })();
  const settings = {
    brokers: stack.kafkaBrokers,
    topic,
    tenant: options.tenant,
    rate: options.rate,
    seconds: options.seconds,
    probeEvery: PROBE_EVERY,
  };
  const child = Bun.spawn(
    [process.execPath, join(import.meta.dir, "freshness-producer.ts"), JSON.stringify(settings)],
    {
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  try {
    const cpu = process.cpuUsage();
    process.stderr.write(
      `bench:api: section "freshness" at ${Math.round((performance.timeOrigin + performance.now()) * 1000)}\n`,
    );
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        const [kind, a, b] = line.split(" ");
        if (kind === "probe" && a && b) written.set(a, Number(b));
        else if (kind === "produced") produced = Number(a);
        else if (kind === "cpu") producerCpuMs = Number(a);
      }
    }
    const code = await child.exited;
    if (code !== 0) throw new Error(`freshness producer exited with ${code}`);
    producing = false;
    await poller;
    const used = process.cpuUsage(cpu);
    const perK = (ms: number) => ((ms / produced) * 1000).toFixed(1);
    process.stderr.write(
      `bench:api: freshness CPU per 1,000 records: this process (API + poller) ${perK((used.user + used.system) / 1000)} ms, ` +
        `the producer ${perK(producerCpuMs)} ms\n`,
    );
    process.stderr.write(
      `bench:api: section "" at ${Math.round((performance.timeOrigin + performance.now()) * 1000)}\n`,
    );
  } finally {
    producing = false;
    child.kill();
    await poller.catch(() => {});
    await api.stop();
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
