import { requireCjs } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import { SinkRejected } from '../types.js';
import type { ExportRecord, ExportSink, SinkDeps, SinkType } from '../types.js';

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
  };
}

interface KafkaProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  sendBatch(batch: {
    topicMessages: { topic: string; messages: { key: string; value: string; headers: Record<string, string> }[] }[];
    acks: number;
    timeout?: number;
  }): Promise<unknown>;
}

/** KafkaOptions configure a Kafka sink. */
export interface KafkaOptions {
  brokers: string[];
  /** topic is where records go that no route gave a topic. */
  topic: string;
  clientId: string;
  timeoutMs: number;
}

/** kafkaMessage is one record as a Kafka message: key = the event's uid (one partition per event, in order), headers carry the record's identity. */
export function kafkaMessage(r: ExportRecord): { key: string; value: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { 'kevents-id': r.id, 'kevents-document-id': r.documentId, 'kevents-version': String(r.version), 'kevents-policy': r.policy };
  if (r.alert !== undefined) headers['kevents-alert'] = r.alert.state;
  return { key: r.key, value: JSON.stringify(r.payload), headers };
}

/** KAFKA_LOG_LEVELS maps kafkajs's levels (1 error … 5 debug) to ours. */
const KAFKA_LOG_LEVELS = ['error', 'error', 'warn', 'info', 'debug', 'debug'] as const;

class KafkaSink implements ExportSink {
  private producer: KafkaProducer | undefined;
  private connecting: Promise<KafkaProducer> | undefined;

  constructor(
    private readonly o: KafkaOptions,
    private readonly logger: Logger,
  ) {}

  private connect(): Promise<KafkaProducer> {
    this.connecting ??= (async () => {
      const { Kafka } = requireCjs('kafkajs') as KafkaDriver;
      const kafka = new Kafka({
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
      // Idempotent: the broker drops a retried batch it already appended (one in flight keeps the order).
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
      try {
        await producer.connect();
      } catch (e) {
        this.connecting = undefined;
        throw e;
      }
      this.producer = producer;
      return producer;
    })();
    return this.connecting;
  }

  async send(records: ExportRecord[]): Promise<void> {
    const producer = await this.connect();
    const byTopic = new Map<string, ReturnType<typeof kafkaMessage>[]>();
    for (const r of records) {
      const topic = r.topic ?? this.o.topic;
      const list = byTopic.get(topic) ?? [];
      list.push(kafkaMessage(r));
      byTopic.set(topic, list);
    }
    try {
      await producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })), acks: -1, timeout: this.o.timeoutMs });
    } catch (e) {
      const err = e as { retriable?: boolean; name?: string; type?: string; message?: string };
      // A broker that refuses the records themselves (too large, invalid topic) will refuse them again.
      if (err.retriable === false && err.name === 'KafkaJSProtocolError' && /MESSAGE_TOO_LARGE|INVALID_TOPIC|RECORD_LIST_TOO_LARGE|INVALID_RECORD/.test(err.type ?? '')) {
        throw new SinkRejected(`kafka: ${err.message ?? String(e)}`, { cause: e });
      }
      // Anything else (no broker, a broken connection) starts again from a new connection.
      await this.reset();
      throw new Error(`kafka: ${err.message ?? String(e)}`, { cause: e });
    }
  }

  private async reset(): Promise<void> {
    const p = this.producer;
    this.producer = undefined;
    this.connecting = undefined;
    await p?.disconnect().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.reset();
  }
}

/** kafkaSinkType produces records to Kafka with an idempotent producer (kafkajs), one topic per route. */
export const kafkaSinkType: SinkType<KafkaOptions> = {
  fields: ['brokers', 'topic', 'clientId', 'timeout'],
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
    };
  },
  create(o, deps: SinkDeps) {
    try {
      requireCjs('kafkajs');
    } catch (e) {
      throw new Error('a kafka sink needs the kafkajs package: npm install kafkajs', { cause: e });
    }
    return new KafkaSink(o, deps.logger);
  },
};
