import type { CoreEvent } from '../api/index.js';
import type { AnyOf } from '../storage/index.js';
import { ADMISSION_KINDS } from './admission.js';
import { CONTAINER_KINDS } from './containers.js';
import { IMAGE_KINDS } from './images.js';
import type { FailureKind, FailureKindId, FailureMatch } from './kind.js';
import { NODE_KINDS } from './nodes.js';
import { OTHER_KIND, WARNING_TYPE } from './other.js';
import { SCHEDULING_KINDS } from './scheduling.js';
import { VOLUME_KINDS } from './volumes.js';
import { defined } from './text.js';
import { WORKLOAD_KINDS } from './workloads.js';

/**
 * CATALOGUE is every failure kind, in the order they are tried: within a
 * reason the most specific message first (a missing ConfigMap before any
 * other `Failed`), `other` last.
 */
export const CATALOGUE: readonly FailureKind[] = [
  ...SCHEDULING_KINDS,
  ...VOLUME_KINDS,
  ...ADMISSION_KINDS,
  ...CONTAINER_KINDS,
  ...IMAGE_KINDS,
  ...NODE_KINDS,
  ...WORKLOAD_KINDS,
  OTHER_KIND,
];

const BY_ID = new Map<FailureKindId, FailureKind>(CATALOGUE.map((k) => [k.id, k]));

const BY_REASON = new Map<string, FailureKind[]>();
for (const k of CATALOGUE) {
  for (const r of k.reasons) {
    const list = BY_REASON.get(r);
    if (list === undefined) BY_REASON.set(r, [k]);
    else list.push(k);
  }
}

/**
 * FAILURE_EVENTS selects every event `classify` may find a failure in, so a
 * reader of failures reads nothing else: the Warnings (`other` takes any) and
 * the reasons the kinds read, Normal ones included (FailedBinding, image
 * BackOff, Killing, NodeNotReady, TaintManagerEviction, …), derived from the
 * catalogue itself.
 */
export const FAILURE_EVENTS: Readonly<Required<Pick<AnyOf, 'types' | 'reasons'>>> = { types: [WARNING_TYPE], reasons: [...BY_REASON.keys()].sort() };

/** failureKind finds a kind by its id. */
export function failureKind(id: FailureKindId): FailureKind {
  return BY_ID.get(id)!;
}

/** FIELD_PATH_CONTAINER reads the container of a kubelet event's `spec.containers{name}` field path. */
const FIELD_PATH_CONTAINER = /^spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]+)\}/;

/**
 * eventNode is the node an event happened on, where the event itself says:
 * the Node it is about, else the host of the kubelet that wrote it.
 */
export function eventNode(e: CoreEvent): string | undefined {
  if (e.involvedObject.kind === 'Node') return e.involvedObject.name || undefined;
  if (e.source?.component === 'kubelet' && e.source.host) return e.source.host;
  if (e.reportingComponent === 'kubelet' && e.reportingInstance) return e.reportingInstance;
  return undefined;
}

/** eventContainer is the container a kubelet event is about, from its field path. */
export function eventContainer(e: CoreEvent): string | undefined {
  return FIELD_PATH_CONTAINER.exec(e.involvedObject.fieldPath ?? '')?.[1];
}

function baseFacts(e: CoreEvent): Record<string, string> {
  const out: Record<string, string> = {
    reason: e.reason ?? '',
    message: (e.message ?? '').trim(),
    objectKind: e.involvedObject.kind ?? '',
    objectName: e.involvedObject.name ?? '',
    namespace: e.involvedObject.namespace ?? e.metadata.namespace ?? '',
  };
  const node = eventNode(e);
  if (node !== undefined) out.node = node;
  const container = eventContainer(e);
  if (container !== undefined) out.container = container;
  return out;
}

/**
 * classify finds the failure kind an event shows and its facts: the first kind
 * of its reason whose message pattern matches, else `other` for a Warning.
 * Normal events the catalogue does not name are not failures (undefined).
 */
export function classify(e: CoreEvent): FailureMatch | undefined {
  for (const kind of BY_REASON.get(e.reason ?? '') ?? []) {
    const facts = kind.match(e);
    if (facts !== undefined) return { kind, facts: { ...baseFacts(e), ...defined(facts) } };
  }
  if (OTHER_KIND.match(e) !== undefined) return { kind: OTHER_KIND, facts: baseFacts(e) };
  return undefined;
}

/**
 * classifier is `classify` remembering each event's answer, for one
 * computation that asks again of the same events (reads that pick pods by their
 * failures, then incidents over a window and its look-back). The answers are
 * shared: no caller changes a match it is given.
 */
export function classifier(): (e: CoreEvent) => FailureMatch | undefined {
  const known = new Map<CoreEvent, FailureMatch | undefined>();
  return (e) => {
    if (known.has(e)) return known.get(e);
    const m = classify(e);
    known.set(e, m);
    return m;
  };
}

/**
 * explainEvent is the catalogue's one-sentence cause of a single event, as an
 * incident of that event alone would state it (`other`'s sentence repeats a
 * Warning's reason and message); undefined for an event that shows no failure.
 */
export function explainEvent(e: CoreEvent): string | undefined {
  const m = classify(e);
  return m === undefined ? undefined : m.kind.cause(m.facts);
}
