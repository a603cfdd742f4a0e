import type { ExportFields } from '../fields.js';
import { isSinkRejected } from '../types.js';
import type { ExportRecord, ExportSink, SinkType } from '../types.js';
import { DEFAULT_TIMEOUT_MS, postBody } from './http-post.js';

/** AlertmanagerOptions configure an Alertmanager sink. */
export interface AlertmanagerOptions {
  /** urls are the Alertmanagers (an HA pair: each gets every alert, as Prometheus sends them). */
  urls: string[];
  alertname: string;
  /** labels are the event labels each alert carries, in ALERT_LABELS order. */
  labels: AlertLabel[];
  staticLabels: Record<string, string>;
  /** publicURL is the kevents web UI's address: generatorURL links to the event's timeline there. */
  publicURL?: string;
  timeoutMs: number;
}

/** ALERT_LABELS are the labels an alert may take from its event: each bounded by the cluster's objects, never by its messages. */
export const ALERT_LABELS = {
  namespace: { field: 'namespace', read: (f: ExportFields) => f.namespace },
  kind: { field: 'regarding.kind', read: (f: ExportFields) => f.regarding.kind },
  name: { field: 'regarding.name', read: (f: ExportFields) => f.regarding.name },
  reason: { field: 'reason', read: (f: ExportFields) => f.reason },
  type: { field: 'type', read: (f: ExportFields) => f.type },
  cluster: { field: 'cluster', read: (f: ExportFields) => f.cluster },
} as const;

/** AlertLabel is one label an alert may take from its event. */
export type AlertLabel = keyof typeof ALERT_LABELS;

const LABEL_NAMES = Object.keys(ALERT_LABELS) as AlertLabel[];
/** DEFAULT_ALERTNAME names the alerts of a sink that names none. */
export const DEFAULT_ALERTNAME = 'KubernetesEventBurst';
/** LABEL_NAME is Prometheus' label name syntax; `__` names are reserved. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** TIMELINE_MARGIN_MS opens the linked timeline a little before the burst. */
const TIMELINE_MARGIN_MS = 5 * 60_000;

/** AlertmanagerAlert is one alert of Alertmanager's `POST /api/v2/alerts` (postableAlert). */
export interface AlertmanagerAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt?: string;
  generatorURL?: string;
}

/**
 * alertmanagerAlert is the alert of one record. Its labels are the alert's identity in
 * Alertmanager, so each is a field the burst holds constant (see stableLabels), never the message
 * or the count, which go to the annotations (with the cause, when the catalogue names one). A firing alert carries no endsAt: Alertmanager holds
 * it for its resolve_timeout, and the policy sends it again while the burst lasts; the resolved one
 * ends when the burst's last change happened.
 */
export function alertmanagerAlert(r: ExportRecord, o: Omit<AlertmanagerOptions, 'urls' | 'timeoutMs'>): AlertmanagerAlert {
  const f = r.fields;
  const a = r.alert;
  const labels: Record<string, string> = { ...o.staticLabels, alertname: o.alertname };
  for (const l of o.labels) {
    const v = ALERT_LABELS[l].read(f);
    // Alertmanager takes an empty value as no label at all; leaving it out says the same.
    if (v !== '') labels[l] = v;
  }
  const since = a?.since ?? f.observedTime;
  const annotations: Record<string, string> = {
    message: f.message,
    count: String(a?.repeats ?? f.count),
    since,
  };
  if (f.cause !== undefined && f.cause !== '') annotations.cause = f.cause;
  if (a !== undefined && a.events > 1) annotations.objects = a.objects.join(', ');
  const alert: AlertmanagerAlert = { labels, annotations, startsAt: since };
  if (a?.state === 'resolved') alert.endsAt = a.until;
  if (o.publicURL !== undefined) alert.generatorURL = timelineURL(o.publicURL, f, since);
  return alert;
}

/** timelineURL links the web UI's timeline of the event's object, from a little before the burst. */
export function timelineURL(publicURL: string, f: ExportFields, since: string): string {
  const start = Date.parse(since);
  const r = f.regarding;
  const query = {
    ns: f.namespace,
    from: Number.isNaN(start) ? '' : new Date(start - TIMELINE_MARGIN_MS).toISOString(),
    object: r.name !== '' ? `${r.kind}/${r.namespace}/${r.name}` : '',
  };
  const p = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== ''));
  return `${publicURL.replace(/\/+$/, '')}/#/timeline?${p.toString()}`;
}

/**
 * stableLabels are the event labels constant over a burst grouped by `groupBy`: all of them when
 * a burst is one event (uid or name), else only those whose field is grouped on. A label that
 * changed within a burst would make Alertmanager see a new alert at each change.
 */
export function stableLabels(groupBy: readonly string[]): AlertLabel[] {
  if (groupBy.includes('uid') || groupBy.includes('name')) return LABEL_NAMES;
  return LABEL_NAMES.filter((l) => groupBy.includes(ALERT_LABELS[l].field) || (l === 'namespace' && groupBy.includes('regarding.namespace')));
}

class AlertmanagerSink implements ExportSink {
  constructor(private readonly o: AlertmanagerOptions) {}

  /**
   * send posts the batch to every Alertmanager at once. It is delivered when at least one took
   * it, as Prometheus counts a notification sent: one down member of an HA pair does not hold
   * the other's alerts back, and it gets the firing ones again at the next resend once it is up.
   * When none takes it, the error makes the runner retry it; nothing is dropped.
   */
  async send(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    const body = JSON.stringify(records.map((r) => alertmanagerAlert(r, this.o)));
    const results = await Promise.allSettled(
      this.o.urls.map((u) => postBody(`${u.replace(/\/+$/, '')}/api/v2/alerts`, body, { headers: { 'Content-Type': 'application/json', 'User-Agent': 'kevents-export' }, signal, timeoutMs: this.o.timeoutMs })),
    );
    if (results.some((r) => r.status === 'fulfilled')) return;
    const errors = results.map((r): unknown => (r.status === 'rejected' ? r.reason : undefined));
    // A refusal by every Alertmanager is the records' fault (SinkRejected); anything else is theirs being down.
    throw errors.find((e) => !isSinkRejected(e)) ?? errors[0];
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** alertmanagerSinkType posts the `alert` policy's bursts to Alertmanager's v2 API. */
export const alertmanagerSinkType: SinkType<AlertmanagerOptions> = {
  fields: ['url', 'urls', 'alertname', 'labels', 'staticLabels', 'publicURL', 'timeout'],
  defaultPolicy: 'alert',
  // Alertmanager's own grouping waits (group_wait); its resolve_timeout is 5m, so a resend every minute keeps an alert alive.
  alertDefaults: { groupWaitMs: 0, resendIntervalMs: 60_000, resolveAll: true },
  read(r, path, raw) {
    const url = /^https?:\/\/[^\s/]+\S*$/;
    const hint = 'must be an http:// or https:// URL';
    const urls: string[] = [];
    if (raw.url !== undefined) {
      const u = r.string([...path, 'url'], raw.url, { pattern: url, hint });
      if (u !== undefined) urls.push(u);
    }
    r.list([...path, 'urls'], raw.urls).forEach((v, i) => {
      const u = r.string([...path, 'urls', i], v, { required: true, pattern: url, hint });
      if (u !== undefined) urls.push(u);
    });
    if (raw.url === undefined && raw.urls === undefined) r.fail([...path, 'url'], 'is required (or urls)');
    if (raw.url !== undefined && raw.urls !== undefined) r.fail([...path, 'urls'], 'give url or urls, not both');
    const rawAlert = raw.alert as { groupBy?: unknown } | undefined;
    const groupBy = Array.isArray(rawAlert?.groupBy) ? rawAlert.groupBy.filter((g): g is string => typeof g === 'string') : ['uid'];
    const stable = stableLabels(groupBy);
    let labels = stable;
    if (raw.labels !== undefined) {
      labels = [];
      r.list([...path, 'labels'], raw.labels).forEach((v, i) => {
        const l = r.string([...path, 'labels', i], v, { required: true, oneOf: LABEL_NAMES }) as AlertLabel | undefined;
        if (l === undefined) return;
        if (!stable.includes(l)) r.fail([...path, 'labels', i], `${l} changes within a burst grouped by ${groupBy.join(', ')}: add ${ALERT_LABELS[l].field} to alert.groupBy or leave the label out`);
        else if (!labels.includes(l)) labels.push(l);
      });
    }
    const staticLabels = r.stringMap([...path, 'staticLabels'], raw.staticLabels) ?? {};
    for (const k of Object.keys(staticLabels)) {
      if (!LABEL_NAME.test(k) || k.startsWith('__')) r.fail([...path, 'staticLabels', k], `${JSON.stringify(k)} is not a label name (letters, digits and _, not starting with a digit or __)`);
      else if (k === 'alertname' || (LABEL_NAMES as string[]).includes(k)) r.fail([...path, 'staticLabels', k], `${k} is set from the event; choose another name`);
    }
    const o: AlertmanagerOptions = {
      urls,
      alertname: r.string([...path, 'alertname'], raw.alertname, { pattern: /^\S.*$/, hint: 'must not be empty' }) ?? DEFAULT_ALERTNAME,
      labels,
      staticLabels,
      timeoutMs: r.duration([...path, 'timeout'], raw.timeout) ?? DEFAULT_TIMEOUT_MS,
    };
    const publicURL = r.string([...path, 'publicURL'], raw.publicURL, { pattern: url, hint });
    if (publicURL !== undefined) o.publicURL = publicURL;
    return o;
  },
  create(o) {
    return new AlertmanagerSink(o);
  },
};
