import { requireCjs } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import { SinkRejected } from '../types.js';

/** LIBRDKAFKA_PACKAGE is the librdkafka binding the fast producer loads (an optional peer dependency). */
export const LIBRDKAFKA_PACKAGE = '@confluentinc/kafka-javascript';

/** KafkaOutMessage is one message as both producers take it. */
export interface KafkaOutMessage {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/**
 * KafkaBatchProducer is what the Kafka sink needs of a producer: send resolves
 * once the broker acknowledged (acks=all) every message of every topic, and
 * throws SinkRejected when the broker refused the records themselves.
 */
export interface KafkaBatchProducer {
  send(byTopic: Map<string, KafkaOutMessage[]>): Promise<void>;
  close(): Promise<void>;
}

interface RdError extends Error {
  code?: number;
}

/** RdProducer is the part of the binding's native-style `Producer` this file uses. */
interface RdProducer {
  connect(options: { timeout: number }, cb: (err: RdError | null) => void): void;
  disconnect(timeoutMs: number, cb: (err: RdError | null) => void): void;
  setPollInterval(ms: number): void;
  produce(topic: string, partition: null, value: Buffer, key: string, timestamp: number, opaque: number, headers: Record<string, string>[]): boolean;
  on(event: 'delivery-report', cb: (err: RdError | null, report: { opaque: number }) => void): void;
  on(event: 'event.error' | 'event.log', cb: (e: { message: string }) => void): void;
}

interface RdDriver {
  Producer: new (config: Record<string, string | number | boolean>) => RdProducer;
}

/**
 * REFUSED_CODES are librdkafka's codes for records the broker (or the client's
 * own check) will refuse again: too large, an invalid topic, an invalid record.
 */
const REFUSED_CODES = new Set([
  10, // ERR_MSG_SIZE_TOO_LARGE
  4, // ERR_INVALID_MSG_SIZE
  17, // ERR_TOPIC_EXCEPTION (INVALID_TOPIC_EXCEPTION)
  18, // ERR_RECORD_LIST_TOO_LARGE
  87, // ERR_INVALID_RECORD
  -186, // ERR__INVALID_ARG (a local check of a topic name or a size)
]);

/** POLL_MS: how often delivery reports are collected; a batch of 1,000 takes tens of ms, so 5 ms adds little. */
const POLL_MS = 5;
/** LINGER_MS: librdkafka's own default, named: a batch's messages leave in few produce requests, several in flight. */
const LINGER_MS = 5;
/** CLOSE_FLUSH_MS: a reset lets messages already on the wire finish this long; the read-back then sees what the broker holds. */
const CLOSE_FLUSH_MS = 1_000;

/**
 * createLibrdkafkaProducer connects an idempotent librdkafka producer
 * (`enable.idempotence`: acks=all, up to 5 requests in flight with the broker
 * keeping each partition's order by sequence number, retries within the
 * session never appended twice). The partitioner is the Java client's (and
 * kafkajs's) murmur2, so a key lands in the same partition whichever client
 * wrote it.
 */
export async function createLibrdkafkaProducer(o: { brokers: string[]; clientId: string; timeoutMs: number; logger: Logger }): Promise<KafkaBatchProducer> {
  const { Producer } = requireCjs(LIBRDKAFKA_PACKAGE) as RdDriver;
  const producer = new Producer({
    'metadata.broker.list': o.brokers.join(','),
    'client.id': o.clientId,
    'enable.idempotence': true,
    // A batch the broker does not take within the sink's timeout fails, and the exporter retries it (with the read-back).
    'message.timeout.ms': o.timeoutMs,
    'socket.connection.setup.timeout.ms': 3_000,
    partitioner: 'murmur2_random',
    'linger.ms': LINGER_MS,
    dr_cb: true,
    event_cb: true,
  });
  producer.on('event.log', (e) => o.logger.debug(`kafka: ${e.message}`, {}));
  // Connection errors come back as failed deliveries too, which the exporter reports once per retry.
  producer.on('event.error', (e) => o.logger.debug(`kafka: ${e.message}`, {}));
  const waiting = new Map<number, (err: RdError | null) => void>();
  let seq = 0;
  producer.on('delivery-report', (err, report) => {
    const done = waiting.get(report.opaque);
    waiting.delete(report.opaque);
    done?.(err);
  });
  await new Promise<void>((resolve, reject) => producer.connect({ timeout: o.timeoutMs }, (err) => (err ? reject(err) : resolve())));
  producer.setPollInterval(POLL_MS);
  return {
    async send(byTopic) {
      const reports: Promise<RdError | null>[] = [];
      for (const [topic, messages] of byTopic) {
        for (const m of messages) {
          const id = seq++;
          reports.push(new Promise((resolve) => waiting.set(id, resolve)));
          try {
            producer.produce(topic, null, Buffer.from(m.value), m.key, 0, id, Object.entries(m.headers).map(([k, v]) => ({ [k]: v })));
          } catch (e) {
            waiting.delete(id);
            reports[reports.length - 1] = Promise.resolve(e as RdError);
          }
        }
      }
      // Every report, not the first failure: a batch is settled (taken or not) before the sink says anything about it.
      const errors = (await Promise.all(reports)).filter((e): e is RdError => e !== null);
      if (errors.length === 0) return;
      const first = errors[0]!;
      // Refused for good only when every failure is a refusal and nothing of the batch was taken:
      // otherwise the exporter reads back what the broker holds and sends the rest.
      if (errors.length === reports.length && errors.every((e) => REFUSED_CODES.has(e.code ?? 0))) {
        throw new SinkRejected(`kafka: ${first.message}`, { cause: first });
      }
      throw new Error(`kafka: ${errors.length} of ${reports.length} message(s) not delivered: ${first.message}`, { cause: first });
    },
    async close() {
      await new Promise<void>((resolve) => producer.disconnect(CLOSE_FLUSH_MS, () => resolve()));
      producer.setPollInterval(0);
      for (const done of waiting.values()) done(Object.assign(new Error('producer closed'), { code: -172 }));
      waiting.clear();
    },
  };
}
