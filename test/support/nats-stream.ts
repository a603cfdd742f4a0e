import { createRequire } from 'node:module';
import type * as JetStream from '@nats-io/jetstream';
import type * as Nats from '@nats-io/transport-node';

// The client is a CommonJS package: loaded as the sink loads it.
const require = createRequire(import.meta.url);
const nats = require('@nats-io/transport-node') as typeof Nats;
const jetstream = require('@nats-io/jetstream') as typeof JetStream;

/** StreamMessage is one message of a stream, as a consumer reads it. */
export interface StreamMessage {
  seq: number;
  subject: string;
  headers: Record<string, string>;
  data: unknown;
}

/** NatsAuth are the credentials of a server started with `--user`/`--pass` or `--auth`. */
export interface NatsAuth {
  user?: string;
  pass?: string;
  token?: string;
}

/** streamState is a stream's message count and last sequence, or undefined while the stream does not exist. */
export async function streamState(servers: string, stream: string, auth: NatsAuth = {}): Promise<{ messages: number; lastSeq: number } | undefined> {
  const nc = await nats.connect({ servers, reconnect: false, ...auth });
  try {
    const jsm = await jetstream.jetstreamManager(nc);
    const info = await jsm.streams.info(stream).catch(() => undefined);
    return info === undefined ? undefined : { messages: info.state.messages, lastSeq: info.state.last_seq };
  } finally {
    await nc.close();
  }
}

/** readStream reads every message of a stream with an ordered consumer, in stream order. */
export async function readStream(servers: string, stream: string, auth: NatsAuth = {}): Promise<StreamMessage[]> {
  const nc = await nats.connect({ servers, reconnect: false, ...auth });
  try {
    const jsm = await jetstream.jetstreamManager(nc);
    const { state } = await jsm.streams.info(stream);
    const out: StreamMessage[] = [];
    if (state.messages === 0) return out;
    const consumer = await jetstream.jetstream(nc).consumers.get(stream, { deliver_policy: jetstream.DeliverPolicy.All });
    while ((out.at(-1)?.seq ?? 0) < state.last_seq) {
      const batch = await consumer.fetch({ max_messages: 1_000, expires: 5_000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        const headers: Record<string, string> = {};
        for (const k of m.headers?.keys() ?? []) headers[k] = m.headers!.get(k);
        out.push({ seq: m.seq, subject: m.subject, headers, data: m.json() });
        if (m.seq >= state.last_seq) break;
      }
      if (got === 0) throw new Error(`stream ${stream}: no message after ${out.at(-1)?.seq ?? 0} of ${state.last_seq}`);
    }
    return out;
  } finally {
    await nc.close();
  }
}

/**
 * changesStreamConfig is an export config that delivers every change (the occurrences
 * policy) to the CHANGES stream of a nats-server, whose duplicate window is one second:
 * so short that only the sink's own read-back keeps a redelivered batch out.
 */
export function changesStreamConfig(address: string, options: { batchSize: number; dropKubeSystem?: boolean }): string {
  const drop = options.dropKubeSystem === true ? '  drop:\n    - namespace: kube-system\n' : '';
  return `sinks:
  - name: changes
    type: nats
    servers: [${address}]
    timeout: 2s
    retry: { initialBackoff: 100ms, maxBackoff: 1s }
    subject: kevents.changes
    policy: occurrences
    batchSize: ${options.batchSize}
    stream: { name: CHANGES, subjects: ["kevents.>"], duplicateWindow: 1s, storage: file }
route:
${drop}  sinks: [changes]
`;
}
