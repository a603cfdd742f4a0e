import type { ExportFields } from './fields.js';
import { documentKey } from './policy.js';
import { renderTemplate } from './template.js';
import type { AlertOptions, ExportRecord } from './types.js';

/** DEFAULT_ALERT fires at the first change of an event after a 10 s wait, and follows a Warning up after 5 quiet minutes. */
export const DEFAULT_ALERT: AlertOptions = { minCount: 1, forMs: 0, groupWaitMs: 10_000, resolveAfterMs: 300_000, groupBy: ['uid'], resendIntervalMs: 0, resolveAll: false };

/** MAX_OBJECTS bounds the objects a burst lists. */
const MAX_OBJECTS = 10;

interface Burst {
  /** fields are those of the burst's latest change. */
  fields: ExportFields;
  events: string[];
  objects: string[];
  firstChange: number;
  openedMs: number;
  lastMs: number;
  repeats: number;
  changes: number;
  /** sent is set once the firing message went (or was rate limited: `suppressed`); `at` is when it last went, `resends` how often it went again. */
  sent?: { repeats: number; suppressed: boolean; at?: number; resends?: number };
}

interface AlertState {
  bursts: Record<string, Burst>;
  /** windows count messages per rate-limit key: [window start ms, messages]. */
  windows: Record<string, [number, number]>;
}

/** AlertPolicy folds changes into bursts and says when to send a burst's message and its follow-up. */
export interface AlertPolicy {
  /** observe adds a change at `atMs` (its observed time), after closing what ended before it. */
  observe(f: ExportFields, atMs: number): ExportRecord[];
  /** tick emits the messages due at `nowMs`. */
  tick(nowMs: number): ExportRecord[];
  /** suppressed counts the messages rate limits held back since the last call. */
  takeSuppressed(): number;
  /** state is the JSON text of the bursts, committed with the sink's position. */
  state(): string;
}

/** createAlertPolicy starts an alert policy, from a committed state when there is one. */
export function createAlertPolicy(o: AlertOptions, template: unknown, state: string | undefined): AlertPolicy {
  let s: AlertState = { bursts: {}, windows: {} };
  if (state !== undefined) {
    try {
      s = JSON.parse(state) as AlertState;
    } catch {
      // A state that cannot be read starts the bursts afresh: at worst one message again.
    }
  }
  let suppressed = 0;
  const keyOf = (f: ExportFields): string => o.groupBy.map((p) => JSON.stringify(lookup(f, p) ?? '')).join('|');
  const allowed = (f: ExportFields, nowMs: number): boolean => {
    const checks: [string, { limit: number; windowMs: number } | undefined][] = [
      [`r:${f.reason}`, o.perReason],
      [`o:${f.regarding.kind}/${f.regarding.namespace}/${f.regarding.name}`, o.perObject],
    ];
    for (const [k, limit] of checks) {
      if (limit === undefined) continue;
      const w = s.windows[k];
      if (w !== undefined && nowMs - w[0] < limit.windowMs && w[1] >= limit.limit) return false;
    }
    for (const [k, limit] of checks) {
      if (limit === undefined) continue;
      const w = s.windows[k];
      if (w === undefined || nowMs - w[0] >= limit.windowMs) s.windows[k] = [nowMs, 1];
      else w[1]++;
    }
    return true;
  };
  const message = (key: string, b: Burst, state: 'firing' | 'resolved', resend = 0): ExportRecord => {
    const f = b.fields;
    return {
      id: `${key}#${b.firstChange}:${state}${resend > 0 ? `+${resend}` : ''}`,
      documentId: `${key}#${b.firstChange}`,
      key: documentKey(f),
      version: f.changeId,
      policy: 'alert',
      fields: f,
      payload: template === undefined ? f : renderTemplate(template, f),
      alert: {
        state,
        repeats: b.repeats,
        changes: b.changes,
        events: b.events.length,
        objects: b.objects,
        since: new Date(b.openedMs).toISOString(),
        until: new Date(b.lastMs).toISOString(),
      },
    };
  };
  const tick = (nowMs: number): ExportRecord[] => {
    const out: ExportRecord[] = [];
    for (const [key, b] of Object.entries(s.bursts)) {
      if (b.sent === undefined && b.fields.count >= o.minCount && nowMs - b.openedMs >= o.groupWaitMs && b.lastMs - b.openedMs >= o.forMs) {
        const ok = allowed(b.fields, nowMs);
        b.sent = { repeats: b.repeats, suppressed: !ok, at: nowMs, resends: 0 };
        if (ok) out.push(message(key, b, 'firing'));
        else suppressed++;
      }
      const over = nowMs - b.lastMs >= Math.max(o.resolveAfterMs, o.groupWaitMs, 1);
      if (!over && o.resendIntervalMs > 0 && b.sent !== undefined && !b.sent.suppressed && nowMs - (b.sent.at ?? b.openedMs) >= o.resendIntervalMs) {
        b.sent.at = nowMs;
        b.sent.resends = (b.sent.resends ?? 0) + 1;
        out.push(message(key, b, 'firing', b.sent.resends));
      }
      if (over) {
        if (b.sent !== undefined && !b.sent.suppressed && o.resolveAfterMs > 0 && (o.resolveAll || b.fields.type === 'Warning')) {
          out.push(message(key, b, 'resolved'));
        }
        delete s.bursts[key];
      }
    }
    for (const [k, w] of Object.entries(s.windows)) {
      const limit = k.startsWith('r:') ? o.perReason : o.perObject;
      if (limit === undefined || nowMs - w[0] >= limit.windowMs) delete s.windows[k];
    }
    return out;
  };
  return {
    observe(f, atMs) {
      const out = tick(atMs);
      const key = keyOf(f);
      let b = s.bursts[key];
      if (b === undefined) {
        b = { fields: f, events: [], objects: [], firstChange: f.changeId, openedMs: atMs, lastMs: atMs, repeats: 0, changes: 0 };
        s.bursts[key] = b;
      }
      b.fields = f;
      b.lastMs = Math.max(b.lastMs, atMs);
      b.changes++;
      b.repeats += Math.max(1, f.count - f.countBefore);
      const event = documentKey(f);
      if (!b.events.includes(event)) b.events.push(event);
      const object = `${f.regarding.kind.toLowerCase()}/${f.regarding.name}`;
      if (b.objects.length < MAX_OBJECTS && !b.objects.includes(object)) b.objects.push(object);
      return out;
    },
    tick,
    takeSuppressed() {
      const n = suppressed;
      suppressed = 0;
      return n;
    },
    state: () => JSON.stringify(s),
  };
}

function lookup(f: ExportFields, path: string): unknown {
  let v: unknown = f;
  for (const p of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}
