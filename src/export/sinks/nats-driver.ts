/**
 * The part of the NATS client the NATS sink uses: `@nats-io/transport-node`
 * (the connection, headers, `.creds` files) and `@nats-io/jetstream` (publish
 * with acknowledgement, streams, an ordered consumer for `delivered`). Both are
 * optional peer dependencies, loaded when a NATS sink is built.
 */

/** MsgHdrs are a message's headers. */
export interface MsgHdrs {
  set(key: string, value: string): void;
  get(key: string): string;
}

/** NatsConnection is a client connection (it reconnects by itself once up). */
export interface NatsConnection {
  close(): Promise<void>;
  closed(): Promise<void | Error>;
}

/** NatsModule is `@nats-io/transport-node`. */
export interface NatsModule {
  connect(options: {
    servers: string[];
    name: string;
    token?: string;
    user?: string;
    pass?: string;
    authenticator?: unknown;
    reconnect: boolean;
    maxReconnectAttempts: number;
    reconnectTimeWait: number;
    timeout: number;
  }): Promise<NatsConnection>;
  headers(): MsgHdrs;
  credsAuthenticator(creds: Uint8Array): unknown;
}

/** StreamInfo is what the sink reads of a stream. */
export interface StreamInfo {
  config: { subjects?: string[]; duplicate_window?: number };
  state: { messages: number; first_seq: number; last_seq: number };
}

/** JetStreamManager manages streams. */
export interface JetStreamManager {
  streams: {
    info(name: string): Promise<StreamInfo>;
    add(config: { name: string; subjects: string[]; storage: 'file' | 'memory'; duplicate_window: number }): Promise<unknown>;
    find(subject: string): Promise<string>;
  };
}

/** JsMsg is a message read from a stream. */
export interface JsMsg {
  seq: number;
  subject: string;
  headers?: MsgHdrs;
}

/** OrderedConsumer reads a stream in order (ephemeral, deleted after use). */
export interface OrderedConsumer {
  fetch(options: { max_messages: number; expires: number }): Promise<AsyncIterable<JsMsg>>;
  delete(): Promise<boolean>;
}

/** JetStreamClient publishes with acknowledgement and reads streams. */
export interface JetStreamClient {
  publish(subject: string, data: string, options: { msgID: string; headers: MsgHdrs; timeout: number }): Promise<{ stream: string; seq: number; duplicate: boolean }>;
  consumers: {
    get(stream: string, options: { deliver_policy: string; opt_start_seq: number; headers_only: boolean }): Promise<OrderedConsumer>;
  };
}

/** JetStreamModule is `@nats-io/jetstream`. */
export interface JetStreamModule {
  jetstream(nc: NatsConnection, options: { timeout: number }): JetStreamClient;
  jetstreamManager(nc: NatsConnection, options: { timeout: number; checkAPI: boolean }): Promise<JetStreamManager>;
  DeliverPolicy: { StartSequence: string };
}
