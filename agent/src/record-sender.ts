import type { ClusterMetadata } from "@platformatic/kafka";
import { produceV9 } from "@platformatic/kafka/apis/producer";
import type { Producer, ProducerInfo } from "@platformatic/kafka/clients/producer";
import { ProtocolError } from "@platformatic/kafka/errors";
import { type Broker, type Connection, ConnectionPool } from "@platformatic/kafka/network";
import { Writer } from "@platformatic/kafka/protocol";
import { BatchSlabs, type Slab } from "./batch-slabs.ts";
import { encodeRecordBatch, recordCount, stampRecordBatch } from "./record-batch.ts";
import type { KafkaMessage } from "./ship-batches.ts";

type ProduceResponse = produceV9.ProduceResponse;

const PRODUCE_API_KEY = 0;
const PRODUCE_VERSION = 9;
const ACKS_ALL = -1;
const DUPLICATE_SEQUENCE_NUMBER = 46;
/** Sequence numbers are int32 and wrap to 0 after the largest (as the Java producer does). */
const SEQUENCE_WRAP = 2 ** 31;

/** One partition's share of a send: encoded once, stamped with the producer id and sequence of each attempt. */
interface PartitionBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: Buffer;
  done: boolean;
}

export interface RecordSenderOptions {
  /** Cluster metadata (partition counts and leaders) and idempotent producer ids come from the client. */
  producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  clientId: string;
  /** The Produce request's timeout, and the connection's request timeout. */
  timeoutMs: number;
  /** Memory reused for a send's record batches: at least a batch's bytes plus its records' framing. */
  slabBytes: number;
  /** Slabs kept for reuse (sends in flight at once, plus one). */
  slabs: number;
}

/** A send's record batches, one per partition, and the slab they were encoded into. */
interface Encoded {
  readonly parts: PartitionBatch[];
  readonly slab: Slab;
}

/**
 * The idempotent produce path with acks from all in-sync replicas, sending record batches this program encodes
 * (`record-batch.ts`) over @platformatic/kafka's connections. The client's own `send` builds a `Map`, a `Writer`
 * and six small buffers per record and copies each request twice; here a batch's records are one buffer copied
 * once, so the client's per-record work is gone and what is left per record is a copy of its bytes.
 *
 * A batch of messages (one `send`) becomes one record batch per partition (a message's `partition` is taken
 * modulo the topic's partition count; without one, round robin), sent in one Produce request per leader. A
 * partition acknowledged (or answered DUPLICATE_SEQUENCE_NUMBER: written by an earlier attempt) is not sent again
 * when the caller retries the same messages array after a failure. Any failure gives up the producer id, as the
 * client does: the next attempt takes a new one with sequences from 0 (batches still in flight under the old id
 * end as they end), and after a network or leadership error the metadata is read again.
 */
export class RecordSender {
  readonly #options: RecordSenderOptions;
  readonly #pool: ConnectionPool;
  readonly #pending = new WeakMap<readonly KafkaMessage[], Encoded>();
  readonly #slabs: BatchSlabs;
  #info: ProducerInfo | undefined;
  #initializing: Promise<ProducerInfo> | undefined;
  readonly #sequences = new Map<string, number>();
  #refreshMetadata = false;
  #roundRobin = 0;

  constructor(options: RecordSenderOptions) {
    this.#options = options;
    this.#pool = new ConnectionPool(options.clientId, { requestTimeout: options.timeoutMs + 5_000 });
    this.#slabs = new BatchSlabs(options.slabBytes, options.slabs);
  }

  /** Resolves when every partition of `messages` is acknowledged; call again with the same array to retry. */
  async send(messages: readonly KafkaMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const metadata = await this.#metadata(messages);
    let encoded = this.#pending.get(messages);
    if (encoded === undefined) {
      const slab = this.#slabs.take();
      encoded = { parts: this.#encode(messages, metadata, slab), slab };
      this.#pending.set(messages, encoded);
    }
    const todo = encoded.parts.filter((part) => !part.done);
    const byLeader = new Map<number, PartitionBatch[]>();
    for (const part of todo) {
      const leader = metadata.topics.get(part.topic)?.partitions[part.partition]?.leader ?? -1;
      const list = byLeader.get(leader);
      if (list === undefined) byLeader.set(leader, [part]);
      else list.push(part);
    }
    const info = await this.#producerInfo();
    let connections: Connection[];
    try {
      connections = await Promise.all(
        [...byLeader.keys()].map((leader) => this.#pool.get(metadata.brokers.get(leader) as Broker)),
      );
    } catch (error) {
      // A leader the metadata does not know (-1 while a partition moves) or cannot be reached: read it again.
      this.#refreshMetadata = true;
      throw error;
    }
    // Sequences are taken and requests queued with no await in between: each partition's batches reach its
    // leader in sequence order. A producer id given up meanwhile (another batch failed) fails this attempt.
    if (this.#info !== info) throw new Error("the producer id was renewed while this batch waited: send it again");
    const requests = [...byLeader.values()].map((leaderParts, i) =>
      this.#produce(connections[i] as Connection, leaderParts, info),
    );
    const errors = (await Promise.all(requests)).flat();
    if (errors.length > 0) {
      if (this.#info === info) {
        this.#info = undefined;
        this.#sequences.clear();
      }
      if (errors.some((error) => (error as { hasStaleMetadata?: boolean }).hasStaleMetadata || isNetwork(error))) {
        this.#refreshMetadata = true;
      }
      throw errors.length === 1 ? errors[0] : new AggregateError(errors, "some partitions were not acknowledged");
    }
    // Acknowledged: every request holding the slab's bytes was written (the connection copied it) and answered.
    this.#pending.delete(messages);
    this.#slabs.give(encoded.slab);
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** The cluster's metadata (the client keeps it; read again once an error said it is stale). */
  async #metadata(messages: readonly KafkaMessage[]): Promise<ClusterMetadata> {
    const topics = [...new Set(messages.map((message) => message.topic))];
    const forceUpdate = this.#refreshMetadata;
    const metadata = await this.#options.producer.metadata({ topics, forceUpdate });
    if (forceUpdate) this.#refreshMetadata = false;
    return metadata;
  }

  #encode(messages: readonly KafkaMessage[], metadata: ClusterMetadata, slab: Slab): PartitionBatch[] {
    const groups = new Map<string, Map<number, KafkaMessage[]>>();
    for (const message of messages) {
      const count = metadata.topics.get(message.topic)?.partitionsCount ?? 1;
      const partition = (message.partition ?? this.#roundRobin++) % count;
      let byPartition = groups.get(message.topic);
      if (byPartition === undefined) {
        byPartition = new Map();
        groups.set(message.topic, byPartition);
      }
      const list = byPartition.get(partition);
      if (list === undefined) byPartition.set(partition, [message]);
      else list.push(message);
    }
    const parts: PartitionBatch[] = [];
    for (const [topic, byPartition] of groups) {
      for (const [partition, list] of byPartition) {
        parts.push({ topic, partition, records: encodeRecordBatch(list, (bytes) => slab.alloc(bytes)), done: false });
      }
    }
    return parts;
  }

  async #producerInfo(): Promise<ProducerInfo> {
    if (this.#info !== undefined) return this.#info;
    this.#initializing ??= this.#options.producer.initIdempotentProducer({}).finally(() => {
      this.#initializing = undefined;
    });
    const info = await this.#initializing;
    this.#info ??= info;
    return this.#info;
  }

  /** Sends one leader's batches; resolves to the errors of the partitions not acknowledged (none: all done). */
  #produce(connection: Connection, parts: PartitionBatch[], info: ProducerInfo): Promise<Error[]> {
    const byTopic = new Map<string, PartitionBatch[]>();
    for (const part of parts) {
      const key = `${part.topic}:${part.partition}`;
      const sequence = this.#sequences.get(key) ?? 0;
      this.#sequences.set(key, (sequence + recordCount(part.records)) % SEQUENCE_WRAP);
      stampRecordBatch(part.records, info.producerId, info.producerEpoch, sequence);
      const list = byTopic.get(part.topic);
      if (list === undefined) byTopic.set(part.topic, [part]);
      else list.push(part);
    }
    const writer = Writer.create()
      .appendString(null) // transactional_id
      .appendInt16(ACKS_ALL)
      .appendInt32(this.#options.timeoutMs)
      .appendUnsignedVarInt(byTopic.size + 1);
    for (const [topic, list] of byTopic) {
      writer.appendString(topic).appendUnsignedVarInt(list.length + 1);
      for (const part of list) {
        writer
          .appendInt32(part.partition)
          .appendUnsignedVarInt(part.records.length + 1)
          .append(part.records);
        writer.appendTaggedFields();
      }
      writer.appendTaggedFields();
    }
    writer.appendTaggedFields();
    return new Promise<Error[]>((resolve) => {
      connection.send(
        PRODUCE_API_KEY,
        PRODUCE_VERSION,
        () => writer,
        produceV9.parseResponse,
        true,
        true,
        (error: Error | null, response: ProduceResponse | undefined) => {
          resolve(settle(parts, error, response ?? (error as { response?: ProduceResponse } | null)?.response));
        },
      );
    });
  }
}

/** Marks the acknowledged partitions done; the others' errors (a protocol error each, or the request's error). */
function settle(parts: PartitionBatch[], error: Error | null, response: ProduceResponse | undefined): Error[] {
  if (response === undefined) return error === null ? [] : [error];
  const errors: Error[] = [];
  for (const part of parts) {
    const answer = response.responses
      .find((topic) => topic.name === part.topic)
      ?.partitionResponses.find((p) => p.index === part.partition);
    if (answer === undefined) {
      errors.push(error ?? new Error(`no answer for ${part.topic}:${part.partition}`));
    } else if (answer.errorCode === 0 || answer.errorCode === DUPLICATE_SEQUENCE_NUMBER) {
      part.done = true;
    } else {
      errors.push(new ProtocolError(answer.errorCode, answer.errorMessage));
    }
  }
  return errors;
}

function isNetwork(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "PLT_KFK_NETWORK" || code === "PLT_KFK_TIMEOUT";
}
