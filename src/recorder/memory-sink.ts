import type { CoreEvent, EventsV1Event } from '../api/index.js';
import { newAlreadyExists, newNotFound } from '../api/index.js';
import { abortable } from '../internal/index.js';
import type { EventSink, EventWriter, WriteOptions } from './event-sink.js';

/** SinkCall is one call a MemoryEventSink received. */
export interface SinkCall {
  api: 'v1' | 'events.k8s.io/v1';
  verb: 'create' | 'update' | 'patch';
  namespace: string;
  name: string;
  body: unknown;
}

/**
 * Fault decides the fate of one call before it is applied: return an error to
 * throw it, a promise to hold the call until it settles (a slow server), or
 * undefined to let it through.
 */
export type Fault = (call: SinkCall) => Error | Promise<unknown> | undefined;

class MemoryWriter<T extends CoreEvent | EventsV1Event> implements EventWriter<T> {
  readonly objects = new Map<string, T>();
  private rv = 0;

  constructor(
    private readonly api: SinkCall['api'],
    private readonly parent: MemoryEventSink,
  ) {}

  async create(namespace: string, event: T, options?: WriteOptions): Promise<T> {
    const name = event.metadata.name ?? '';
    await this.parent.enter({ api: this.api, verb: 'create', namespace, name, body: event }, options);
    const key = `${namespace}/${name}`;
    if (this.objects.has(key)) throw newAlreadyExists({ group: this.group(), resource: 'events' }, name);
    return this.store(key, structuredClone(event));
  }

  async update(namespace: string, event: T, options?: WriteOptions): Promise<T> {
    const name = event.metadata.name ?? '';
    await this.parent.enter({ api: this.api, verb: 'update', namespace, name, body: event }, options);
    return this.store(`${namespace}/${name}`, structuredClone(event));
  }

  async patch(namespace: string, name: string, patch: object, options?: WriteOptions): Promise<T> {
    await this.parent.enter({ api: this.api, verb: 'patch', namespace, name, body: patch }, options);
    const key = `${namespace}/${name}`;
    const current = this.objects.get(key);
    if (current === undefined) throw newNotFound({ group: this.group(), resource: 'events' }, name);
    // Top-level fields replace: what a strategic merge patch of these flat event fields does.
    return this.store(key, { ...current, ...(structuredClone(patch) as Partial<T>) });
  }

  private store(key: string, event: T): T {
    event.metadata = { ...event.metadata, resourceVersion: String(++this.rv) };
    this.objects.set(key, event);
    return structuredClone(event);
  }

  private group(): string {
    return this.api === 'v1' ? '' : 'events.k8s.io';
  }
}

/**
 * MemoryEventSink keeps events in memory and logs every call, with a hook to
 * inject faults: a sink for tests of code that records events.
 */
export class MemoryEventSink implements EventSink {
  readonly calls: SinkCall[] = [];
  readonly coreV1: MemoryWriter<CoreEvent>;
  readonly eventsV1: MemoryWriter<EventsV1Event>;
  /** fault, when set, runs on every call before it is applied. */
  fault: Fault | undefined;

  constructor() {
    this.coreV1 = new MemoryWriter<CoreEvent>('v1', this);
    this.eventsV1 = new MemoryWriter<EventsV1Event>('events.k8s.io/v1', this);
  }

  /** enter logs a call and applies the fault hook; writers call it first. */
  async enter(call: SinkCall, options?: WriteOptions): Promise<void> {
    this.calls.push(structuredClone(call));
    options?.signal?.throwIfAborted();
    const verdict = this.fault?.(call);
    if (verdict instanceof Promise) {
      // The fault hook may abort the signal itself, before or while it holds the write: the write fails with its reason.
      const signal = options?.signal;
      await abortable(verdict, signal, () => (signal?.reason instanceof Error ? signal.reason : new Error('aborted')));
      return;
    }
    if (verdict !== undefined) throw verdict;
  }

  /** summary lists the calls as `verb namespace/name`. */
  summary(): string[] {
    return this.calls.map((c) => `${c.verb} ${c.namespace}/${c.name}`);
  }
}
