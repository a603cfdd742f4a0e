import type { CoreEvent, Occurrence } from '../../src/api/index.js';

/** T0 is the instant the test events start from: 2025-01-01T00:00:00Z. */
export const T0 = Date.UTC(2025, 0, 1);

/** iso is T0 plus `seconds`, as a wire time. */
export function iso(seconds: number): string {
  return new Date(T0 + seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** testEvent builds a core/v1 event about a Pod (or another kind) for the timeline's unit tests. */
export function testEvent(o: {
  name: string;
  namespace?: string;
  kind?: string;
  object: string;
  reason: string;
  message?: string;
  type?: string;
  first: number;
  last?: number;
  count?: number;
  fieldPath?: string;
  host?: string;
  component?: string;
}): CoreEvent {
  const namespace = o.namespace ?? 'default';
  const kind = o.kind ?? 'Pod';
  return {
    metadata: { name: o.name, namespace, uid: `uid-${o.name}` },
    involvedObject: { kind, name: o.object, ...(kind === 'Node' ? {} : { namespace }), ...(o.fieldPath !== undefined ? { fieldPath: o.fieldPath } : {}) },
    reason: o.reason,
    message: o.message ?? `${o.reason} happened to ${o.object}`,
    type: o.type ?? 'Normal',
    source: { component: o.component ?? 'kubelet', ...(o.host !== undefined ? { host: o.host } : {}) },
    firstTimestamp: iso(o.first),
    lastTimestamp: iso(o.last ?? o.first),
    count: o.count ?? 1,
  };
}

/** testOccurrence is one recorded change of `e`. */
export function testOccurrence(e: CoreEvent, o: { at: number; before: number; after: number; message?: string }): Occurrence {
  return {
    metadata: { name: `${e.metadata.name ?? ''}.${o.after}`, namespace: e.metadata.namespace ?? '' },
    event: { name: e.metadata.name ?? '', namespace: e.metadata.namespace ?? '', ...(e.metadata.uid !== undefined ? { uid: e.metadata.uid } : {}) },
    observedTime: new Date(T0 + o.at * 1000 + 250).toISOString().replace('Z', '000Z'),
    lastSeen: new Date(T0 + o.at * 1000).toISOString().replace('Z', '000Z'),
    countBefore: o.before,
    countAfter: o.after,
    regarding: e.involvedObject,
    ...(o.message !== undefined ? { message: o.message } : {}),
  };
}
