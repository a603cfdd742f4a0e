import { isValidEventType } from './event-checks.js';
import { getReference } from './reference.js';
import type { EventInput, EventRecorder, LegacyEventInput, LegacyEventRecorder } from './types.js';

/** FakeRecorderOptions configure a FakeRecorder. */
export interface FakeRecorderOptions {
  /** includeObject appends ` involvedObject{kind=…,apiVersion=…}` to each line, as client-go's FakeRecorder. */
  includeObject?: boolean;
}

/** RecordedEvent is one event a FakeRecorder saw, in a shape common to both APIs. */
export interface RecordedEvent {
  type: string;
  reason: string;
  /** action is '' for core/v1 events. */
  action: string;
  /** message is the note (events.k8s.io/v1) or message (core/v1). */
  message: string;
  object: { kind?: string; apiVersion?: string; namespace?: string; name?: string };
  annotations?: Record<string, string>;
}

/**
 * FakeRecorder is a recorder for users' unit tests: it writes nothing and keeps
 * every event, both as `"<type> <reason> <message>"` lines (client-go's
 * FakeRecorder format) and as structured records. It serves either API.
 */
export class FakeRecorder implements EventRecorder, LegacyEventRecorder {
  /** events are the lines, oldest first. */
  readonly events: string[] = [];
  readonly records: RecordedEvent[] = [];
  private readonly includeObject: boolean;

  constructor(options: FakeRecorderOptions = {}) {
    this.includeObject = options.includeObject ?? false;
  }

  event(input: EventInput | LegacyEventInput): void {
    const legacy = 'involvedObject' in input;
    const ref = getReference(legacy ? input.involvedObject : input.regarding);
    const object = ref instanceof Error ? {} : ref;
    const message = legacy ? input.message : (input.note ?? '');
    const record: RecordedEvent = {
      type: input.type,
      reason: input.reason,
      action: legacy ? '' : input.action,
      message,
      object: { kind: object.kind, apiVersion: object.apiVersion, namespace: object.namespace, name: object.name },
    };
    if (input.annotations !== undefined) record.annotations = { ...input.annotations };
    this.records.push(record);
    let line = `${input.type} ${input.reason} ${message}`;
    if (this.includeObject) line += ` involvedObject{kind=${object.kind ?? ''},apiVersion=${object.apiVersion ?? ''}}`;
    this.events.push(line);
  }

  /** validTypes tells whether every recorded type is one a real recorder would send. */
  validTypes(): boolean {
    return this.records.every((r) => isValidEventType(r.type));
  }

  /** clear forgets everything recorded. */
  clear(): void {
    this.events.length = 0;
    this.records.length = 0;
  }
}
