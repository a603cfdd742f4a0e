import { randomUUID } from 'node:crypto';
import { requireCjs } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import { SinkRejected } from '../types.js';
import type { ExportRecord, ExportSink, SinkDeps, SinkType } from '../types.js';
import { LIBRDKAFKA_PACKAGE, createLibrdkafkaProducer } from './kafka-librdkafka.js';
import type { KafkaBatchProducer, KafkaOutMessage } from './kafka-librdkafka.js';

/**
 * KafkaDriver is the part of `kafkajs` the Kafka sink uses (an optional peer
 * dependency, loaded when a Kafka sink is built): a client, an idempotent
 * producer and `sendBatch`.
 */
interface KafkaDriver {
  Kafka: new (config: {
    clientId: string;
    brokers: string[];
    logCreator: () => (entry: { level: number; log: { message: string } & Record<string, unknown> }) => void;
    retry?: { retries: number; initialRetryTime?: number; maxRetryTime?: number };
    connectionTimeout?: number;
    requestTimeout?: number;
  }) => {
    producer(config: { idempotent: boolean; maxInFlightRequests: number; allowAutoTopicCreation: boolean }): KafkaProducer;
    consumer(config: { groupId: string; allowAutoTopicCreation: boolean; maxWaitTimeInMs?: number }): KafkaConsumer;
    admin(): KafkaAdmin;
  };
}

interface KafkaAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  listTopics(): Promise<string[]>;
  fetchTopicOffsets(topic: string): Promise<{ partition: number; high: string; low: string }[]>;
}

interface KafkaConsumer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  subscribe(s: { topics: string[]; fromBeginning: boolean }): Promise<void>;
  run(r: {
    autoCommit: boolean;
    eachBatch: (p: { batch: { topic: string; partition: number; messages: { offset: string; headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined> }[] } }) => Promise<void>;
  }): Promise<void>;
  seek(s: { topic: string; partition: number; offset: string }): void;
}

/** TAIL_SLACK: how many messages before a batch's own count the redelivery check reads back per partition (other writers of the topic). */
const TAIL_SLACK = 100;

interface KafkaProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  sendBatch(batch: {
    topicMessages: { topic: string; messages: { key: string; value: string; headers: Record<string, string> }[] }[];
    acks: number;
    timeout?: number;
  }): Promise<unknown>;
}

/** KafkaClient names the producer: librdkafka (several requests in flight) or kafkajs (one). */
export type KafkaClient = 'librdkafka' | 'kafkajs';

/** KafkaOptions configure a Kafka sink. */
export interface KafkaOptions {
  brokers: string[];
  /** topic is where records go that no route gave a topic. */
  topic: string;
  clientId: string;
  timeoutMs: number;
  /** client is the producer; undefined: librdkafka where its package is installed, else kafkajs. */
  client?: KafkaClient;
}

/** kafkaMessage is one record as a Kafka message: key = the event's uid (one partition per event, in order), headers carry the record's identity. */
export function kafkaMessage(r: ExportRecord): KafkaOutMessage {
  const headers: Record<string, string> = { 'kevents-id': r.id, 'kevents-document-id': r.documentId, 'kevents-version': String(r.version), 'kevents-policy': r.policy };
  if (r.alert !== undefined) headers['kevents-alert'] = r.alert.state;
  return { key: r.key, value: JSON.stringify(r.payload), headers };
}

/** KAFKA_LOG_LEVELS maps kafkajs's levels (1 error … 5 debug) to ours. */
const KAFKA_LOG_LEVELS = ['error', 'error', 'warn', 'info', 'debug', 'debug'] as const;

/** librdkafkaInstalled tells whether the librdkafka binding loads (it is a native module: its build may be missing). */
function librdkafkaInstalled(): boolean {
  try {
    requireCjs(LIBRDKAFKA_PACKAGE);
    return true;
  } catch {
    return false;
  }
}

class KafkaSink implements ExportSink {
  private producer: KafkaBatchProducer | undefined;
  private connecting: Promise<KafkaBatchProducer> | undefined;

  constructor(
    private readonly o: KafkaOptions & { client: KafkaClient },
    private readonly logger: Logger,
  ) {}

  private client(): InstanceType<KafkaDriver['Kafka']> {
    const { Kafka } = requireCjs('kafkajs') as KafkaDriver;
    return new Kafka({
      clientId: this.o.clientId,
      brokers: this.o.brokers,
      // The exporter retries (and counts) failed batches itself; the client gives up quickly and reports.
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 },
      connectionTimeout: 3_000,
      requestTimeout: this.o.timeoutMs,
      logCreator: () => (entry) => {
        const level = KAFKA_LOG_LEVELS[entry.level] ?? 'debug';
        // kafkajs logs every failed connection as an error; the exporter reports those once per retry.
        this.logger[level === 'error' ? 'debug' : level](`kafka: ${entry.log.message}`, {});
      },
    });
  }

  private connect(): Promise<KafkaBatchProducer> {
    this.connecting ??= (async () => {
      try {
        const o = this.o;
        this.producer = o.client === 'librdkafka' ? await createLibrdkafkaProducer({ ...o, logger: this.logger }) : await this.kafkajsProducer();
        return this.producer;
      } catch (e) {
        this.connecting = undefined;
        throw new Error(`kafka: ${(e as Error).message}`, { cause: e });
      }
    })();
    return this.connecting;
  }

  /** kafkajsProducer is the producer before librdkafka: idempotent, one request in flight, so a retried batch is appended once and the order kept. */
  private async kafkajsProducer(): Promise<KafkaBatchProducer> {
    const producer = this.client().producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
    await producer.connect();
    return {
      send: async (byTopic) => {
        try {
          await producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })), acks: -1, timeout: this.o.timeoutMs });
        } catch (e) {
          const err = e as { retriable?: boolean; name?: string; type?: string; message?: string };
          // A broker that refuses the records themselves (too large, invalid topic) will refuse them again.
          if (err.retriable === false && err.name === 'KafkaJSProtocolError' && /MESSAGE_TOO_LARGE|INVALID_TOPIC|RECORD_LIST_TOO_LARGE|INVALID_RECORD/.test(err.type ?? '')) {
            throw new SinkRejected(`kafka: ${err.message ?? String(e)}`, { cause: e });
          }
          throw new Error(`kafka: ${err.message ?? String(e)}`, { cause: e });
        }
      },
      close: () => producer.disconnect(),
    };
  }

  /**
   * delivered reads back the tail of each partition the records go to (as
   * many messages as the batch has for that topic, plus TAIL_SLACK) and
   * returns the records whose `kevents-id` header is there. The idempotent
   * producer drops a retry only within one producer session; this covers a
   * new session after a crash or a lost connection.
   */
  async delivered(records: ExportRecord[], signal: AbortSignal): Promise<Set<string>> {
    const wanted = new Map<string, number>();
    for (const r of records) {
      const topic = r.topic ?? this.o.topic;
      wanted.set(topic, (wanted.get(topic) ?? 0) + 1);
    }
    const kafka = this.client();
    const admin = kafka.admin();
    await admin.connect();
    const ranges: { topic: string; partition: number; from: bigint; to: bigint }[] = [];
    try {
      const existing = new Set(await admin.listTopics());
      for (const [topic, n] of wanted) {
        if (!existing.has(topic)) continue;
        for (const p of await admin.fetchTopicOffsets(topic)) {
          const high = BigInt(p.high);
          const low = BigInt(p.low);
          const from = high - BigInt(n + TAIL_SLACK) > low ? high - BigInt(n + TAIL_SLACK) : low;
          if (from < high) ranges.push({ topic, partition: p.partition, from, to: high });
        }
      }
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    const held = new Set<string>();
    if (ranges.length === 0) return held;
    const ids = new Set(records.map((r) => r.id));
    const left = new Map(ranges.map((r) => [`${r.topic}/${r.partition}`, r]));
    const consumer = kafka.consumer({ groupId: `${this.o.clientId}-check-${randomUUID()}`, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [...new Set(ranges.map((r) => r.topic))], fromBeginning: false });
      let done: () => void = () => {};
      const finished = new Promise<void>((resolve) => (done = resolve));
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          const range = left.get(`${batch.topic}/${batch.partition}`);
          if (range === undefined) return;
          for (const m of batch.messages) {
            const id = m.headers?.['kevents-id'];
            const text = Array.isArray(id) ? String(id[0]) : id?.toString();
            if (text !== undefined && ids.has(text)) held.add(text);
            if (BigInt(m.offset) + 1n >= range.to) left.delete(`${batch.topic}/${batch.partition}`);
          }
          if (left.size === 0) done();
          await Promise.resolve();
        },
      });
      for (const r of ranges) consumer.seek({ topic: r.topic, partition: r.partition, offset: String(r.from) });
      const timeout = new Promise<never>((_, reject) => {
        const t = setTimeout(() => reject(new Error(`kafka: reading back ${left.size} partition(s) to check a redelivery timed out`)), this.o.timeoutMs);
        t.unref();
        signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
      });
      await Promise.race([finished, timeout]);
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
    return held;
  }

  async send(records: ExportRecord[]): Promise<void> {
    const producer = await this.connect();
    const byTopic = new Map<string, KafkaOutMessage[]>();
    for (const r of records) {
      const topic = r.topic ?? this.o.topic;
      const list = byTopic.get(topic) ?? [];
      list.push(kafkaMessage(r));
      byTopic.set(topic, list);
    }
    try {
      await producer.send(byTopic);
    } catch (e) {
      // Anything but a refusal (no broker, a broken connection) starts again from a new connection,
      // closed before the error is reported, so the read-back before the retry sees all the broker will hold.
      if (!(e instanceof SinkRejected)) await this.reset();
      throw e;
    }
  }

  private async reset(): Promise<void> {
    const p = this.producer;
    this.producer = undefined;
    this.connecting = undefined;
    await p?.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.reset();
  }
}

/** kafkaSinkType produces records to Kafka with an idempotent producer (librdkafka, or kafkajs), one topic per route. */
export const kafkaSinkType: SinkType<KafkaOptions> = {
  fields: ['brokers', 'topic', 'clientId', 'timeout', 'client'],
  defaultPolicy: 'upsert',
  read(r, path, raw) {
    const brokers = r.list([...path, 'brokers'], raw.brokers, true).flatMap((b, i) => {
      const s = r.string([...path, 'brokers', i], b, { required: true, pattern: /^[^\s:/]+:\d+$/, hint: 'must be HOST:PORT' });
      return s === undefined ? [] : [s];
    });
    if (Array.isArray(raw.brokers) && raw.brokers.length === 0) r.fail([...path, 'brokers'], 'needs at least one broker');
    return {
      brokers,
      topic: r.string([...path, 'topic'], raw.topic, { required: true, pattern: /^[a-zA-Z0-9._-]{1,249}$/, hint: 'is not a Kafka topic name' }) ?? '',
      clientId: r.string([...path, 'clientId'], raw.clientId) ?? 'kevents-export',
      timeoutMs: r.duration([...path, 'timeout'], raw.timeout) ?? 30_000,
      ...(raw.client !== undefined ? { client: r.string([...path, 'client'], raw.client, { oneOf: ['librdkafka', 'kafkajs'] }) as KafkaClient } : {}),
    };
  },
  create(o, deps: SinkDeps) {
    try {
      requireCjs('kafkajs');
    } catch (e) {
      throw new Error('a kafka sink needs the kafkajs package: npm install kafkajs', { cause: e });
    }
    const client = o.client ?? (librdkafkaInstalled() ? 'librdkafka' : 'kafkajs');
    if (client === 'librdkafka' && !librdkafkaInstalled()) throw new Error(`a kafka sink with client: librdkafka needs the ${LIBRDKAFKA_PACKAGE} package: npm install ${LIBRDKAFKA_PACKAGE}`);
    deps.logger.info('export: kafka producer', { client });
    return new KafkaSink({ ...o, client }, deps.logger);
  },
};
