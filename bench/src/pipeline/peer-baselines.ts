import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "@svc/common";
import { BenchError } from "../errors.ts";
import type { BenchTopics } from "../kafka-topics.ts";
import { runToEnd, spawnTracked } from "../spawn-tracked.ts";
import type { PeerTools } from "../tools.ts";
import type { ShipFigures } from "./results.ts";

/** librdkafka settings shared by kcat and omkafka: the same guarantees as our agent (idempotent, acks all). */
const PRODUCER_PROPS = ["enable.idempotence=true", "acks=all", "linger.ms=20", "compression.codec=none"];

/**
 * `kcat -P` ships the file into `topic` (one record per line, no key: librdkafka's sticky partitioner) and exits
 * once every record is acknowledged. Timed from spawn to exit; the topic's offsets confirm the count.
 */
export async function kcatProduce(
  tools: PeerTools,
  brokers: string,
  topics: BenchTopics,
  topic: string,
  file: string,
  records: number,
): Promise<ShipFigures> {
  const props = PRODUCER_PROPS.flatMap((p) => ["-X", p]);
  const run = await runToEnd("kcat -P", [tools.kcat, "-P", "-b", brokers, "-t", topic, ...props, "-l", file]);
  const stored = await topics.total(topic);
  if (stored !== records) {
    throw new BenchError("BENCH_STEP_FAILED", `kcat -P: topic ${topic} holds ${stored} records, expected ${records}`);
  }
  return { records, bytes: statSync(file).size, ms: run.ms, peakRss: run.peakRss, cpuMs: run.cpuMs };
}

/**
 * `kcat -C` reads the whole topic from the beginning to a local file and exits at its end (`-e`). Buffered output
 * (until 2026-11-29 it ran with `-u`, unbuffered: two `write(2)` calls per record, which slowed the peer the consumer
 * is judged against).
 */
export async function kcatConsume(
  tools: PeerTools,
  brokers: string,
  topic: string,
  outFile: string,
  records: number,
): Promise<ShipFigures> {
  const fd = openSync(outFile, "w");
  let run: Awaited<ReturnType<typeof runToEnd>>;
  try {
    run = await runToEnd(
      "kcat -C",
      [tools.kcat, "-C", "-b", brokers, "-t", topic, "-o", "beginning", "-e", "-q", "-D", "\n"],
      { stdout: fd },
    );
  } finally {
    closeSync(fd);
  }
  const text = readFileSync(outFile);
  let lines = 0;
  for (const byte of text) if (byte === 10) lines++;
  if (lines !== records) {
    throw new BenchError("BENCH_STEP_FAILED", `kcat -C wrote ${lines} records, expected ${records}`);
  }
  return { records, bytes: text.length, ms: run.ms, peakRss: run.peakRss };
}

/** rsyslog's configuration for one run: imfile reads `file` from its start, omkafka ships each line as is. */
export function rsyslogConfig(options: {
  workDir: string;
  modules: string;
  file: string;
  brokers: string;
  topic: string;
}): string {
  const props = PRODUCER_PROPS.map((p) => `"${p}"`).join(", ");
  return `global(workDirectory="${options.workDir}" maxMessageSize="64k")
module(load="${options.modules}/imfile.so" mode="inotify")
module(load="${options.modules}/omkafka.so")
template(name="svc_bench_raw" type="string" string="%msg%")
ruleset(name="svc_bench" queue.type="LinkedList" queue.size="200000" queue.dequeueBatchSize="2048") {
  action(type="omkafka" broker=["${options.brokers}"] topic="${options.topic}" template="svc_bench_raw"
         partitions.auto="on" confParam=[${props}])
}
input(type="imfile" file="${options.file}" tag="svc-bench" ruleset="svc_bench" freshStartTail="off"
      readMode="0" escapeLF="off")
`;
}

/**
 * rsyslogd of our own (its own config, work dir and pid file; never the system one) ships the file with imfile →
 * omkafka. Timed from spawn until the topic holds every record; its peak RSS is read before it is stopped.
 */
export async function rsyslogShip(
  tools: PeerTools,
  brokers: string,
  topics: BenchTopics,
  topic: string,
  file: string,
  records: number,
  dir: string,
): Promise<ShipFigures> {
  const workDir = join(dir, "rsyslog-work");
  mkdirSync(workDir, { recursive: true });
  const conf = join(dir, "rsyslog.conf");
  writeFileSync(conf, rsyslogConfig({ workDir, modules: tools.rsyslogModules, file, brokers, topic }));
  const check = await runToEnd("rsyslogd -N1", [tools.rsyslogd, "-N1", "-f", conf]).catch((error: unknown) => {
    throw new BenchError("BENCH_STEP_FAILED", `rsyslog refused its config ${conf}: ${(error as Error).message}`, {
      cause: error,
    });
  });
  void check;
  const rsyslogd = spawnTracked("rsyslogd", [tools.rsyslogd, "-n", "-f", conf, "-i", join(dir, "rsyslogd.pid")]);
  try {
    await waitFor(
      `rsyslog to ship ${records} records`,
      async () => ((await topics.total(topic)) >= records ? true : undefined),
      { timeoutMs: 300_000, intervalMs: 20, abort: rsyslogd.exitedEarly },
    );
    const ms = performance.now() - rsyslogd.startedAt;
    const cpuMs = rsyslogd.cpuMs();
    rsyslogd.rss.sample();
    const peakRss = await rsyslogd.stop(10_000);
    return { records, bytes: statSync(file).size, ms, peakRss, cpuMs };
  } finally {
    await rsyslogd.stop(5_000);
  }
}
