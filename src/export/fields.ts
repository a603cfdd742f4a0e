import type { ExportChange } from '../storage/index.js';

/**
 * ExportFields is the documented field set of one change, what routes match
 * on and templates read (docs/export.md lists each field). Names follow the
 * events.k8s.io/v1 view (`regarding`, `note` is `message` here as in both
 * `kubectl` printers), times are RFC 3339.
 */
export interface ExportFields {
  /** changeId is the change's id in the archive's log (store-wide, increasing). */
  changeId: number;
  cluster: string;
  namespace: string;
  /** name is the Event's name; uid its uid (the event's identity across its repeats). */
  name: string;
  uid: string;
  type: string;
  reason: string;
  message: string;
  action: string;
  regarding: { kind: string; namespace: string; name: string; uid: string; apiVersion: string; fieldPath: string };
  related: { kind: string; namespace: string; name: string; uid: string; apiVersion: string } | null;
  reportingController: string;
  reportingInstance: string;
  /** count is the event's count after the change; countBefore what it was (0 for a new event). */
  count: number;
  countBefore: number;
  /** isNew is true for the change that created the event. */
  isNew: boolean;
  firstSeen: string;
  lastSeen: string;
  /** observedTime is when kevents saw the change. */
  observedTime: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /**
   * cause is the failure catalogue's one-sentence cause of the event (as `kevents
   * incidents` states it), given to the alert policy's messages only, and only when
   * the catalogue names one; event text inside it is as untrusted as the message.
   */
  cause?: string;
}

/** FIELD_NAMES lists the top-level fields of ExportFields, for validating templates. */
export const FIELD_NAMES: readonly (keyof ExportFields)[] = [
  'changeId',
  'cluster',
  'namespace',
  'name',
  'uid',
  'type',
  'reason',
  'message',
  'action',
  'regarding',
  'related',
  'reportingController',
  'reportingInstance',
  'count',
  'countBefore',
  'isNew',
  'firstSeen',
  'lastSeen',
  'observedTime',
  'labels',
  'annotations',
  'cause',
];

/** fieldsOf builds the field set of one change of the log. */
export function fieldsOf(change: ExportChange): ExportFields {
  const o = change.occurrence;
  const e = change.event;
  const r = e?.involvedObject ?? o.regarding;
  const related = e?.related ?? o.related ?? null;
  const observedTime = o.observedTime ?? '';
  const lastSeen = o.lastSeen ?? observedTime;
  return {
    changeId: change.id,
    cluster: o.cluster ?? '',
    namespace: o.event.namespace,
    name: o.event.name,
    uid: o.event.uid ?? e?.metadata.uid ?? '',
    type: o.type ?? '',
    reason: o.reason ?? '',
    message: o.message ?? '',
    action: e?.action ?? '',
    regarding: {
      kind: r.kind ?? '',
      namespace: r.namespace ?? '',
      name: r.name ?? '',
      uid: r.uid ?? '',
      apiVersion: r.apiVersion ?? '',
      fieldPath: r.fieldPath ?? '',
    },
    related:
      related === null
        ? null
        : { kind: related.kind ?? '', namespace: related.namespace ?? '', name: related.name ?? '', uid: related.uid ?? '', apiVersion: related.apiVersion ?? '' },
    reportingController: o.reportingController ?? '',
    reportingInstance: o.reportingInstance ?? '',
    count: o.countAfter,
    countBefore: o.countBefore,
    isNew: o.countBefore === 0,
    firstSeen: e?.firstTimestamp ?? e?.eventTime ?? e?.metadata.creationTimestamp ?? lastSeen ?? '',
    lastSeen: lastSeen ?? '',
    observedTime,
    labels: { ...(e?.metadata.labels ?? {}) },
    annotations: { ...(e?.metadata.annotations ?? {}) },
  };
}

/** fieldAt reads a dotted path of the field set (`regarding.name`, `labels.app`); undefined when absent. */
export function fieldAt(fields: ExportFields, path: string): unknown {
  let v: unknown = fields;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}
