/**
 * `bun audit-api/bench/freshness-producer.ts <settings JSON>`: the freshness run's producer (freshness-section.ts),
 * a process of its own as the agent is in production, so the API's JavaScript thread in the bench does only the
 * API's work. Produces `rate` records/s for `seconds` s to `topic` (one batch every 10 ms), 1 in `probeEvery` a
 * probe (principal `svc-probe`). Writes to stdout, per batch, one `probe <id> <epoch ms>` line per probe (its write
 * time: when it was handed to the producer, the record's `time`), then `produced <n>` (acknowledged records) and `cpu <ms>`
 * (its CPU time) at the end.
 */
import { Producer } from "@platformatic/kafka";

interface ProducerSettings {
  brokers: string[];
  topic: string;
  tenant: string;
  rate: number;
  seconds: number;
  probeEvery: number;
}

const settings = JSON.parse(process.argv[2] ?? "{}") as ProducerSettings;
const producer = new Producer({ clientId: "bench-api-fresh", bootstrapBrokers: settings.brokers, acks: -1 });
const tickMs = 10;
const perTick = Math.max(1, Math.round((settings.rate * tickMs) / 1000));
let produced = 0;
const sends: Promise<void>[] = [];
try {
  const end = performance.now() + settings.seconds * 1000;
  let next = performance.now();
  let i = 0;
  while (performance.now() < end) {
    const messages = [];
    let probes = "";
    for (let k = 0; k < perTick; k++, i++) {
      const probe = i % settings.probeEvery === 0;
      const now = Date.now();
      const id = `${probe ? "probe" : "ev"}-${String(i).padStart(9, "0")}`;
      const record = {
        id,
        time: new Date(now).toISOString(),
        source: "endpoint",
        action: "/svc.Endpoint/Search",
        resource: "index/products",
        result: "OK",
        duration_ms: 1,
        claimed_tenant_id: settings.tenant,
        principal_id: probe ? "svc-probe" : "svc-app",
        tenant_id: settings.tenant,
      };
      if (probe) probes += `probe ${id} ${now}\n`;
      messages.push({
        topic: settings.topic,
        key: Buffer.from(settings.tenant),
        value: Buffer.from(JSON.stringify(record)),
      });
    }
    if (probes) process.stdout.write(probes);
    sends.push(
      producer.send({ messages }).then(
        () => {
          produced += messages.length;
        },
        (error: unknown) => {
          process.stderr.write(`freshness producer: a batch failed: ${String(error)}\n`);
        },
      ),
    );
    next += tickMs;
    const wait = next - performance.now();
    if (wait > 0) await Bun.sleep(wait);
  }
  await Promise.all(sends);
  const cpu = process.cpuUsage();
  process.stdout.write(`produced ${produced}\ncpu ${(cpu.user + cpu.system) / 1000}\n`);
} finally {
  await producer.close();
}
