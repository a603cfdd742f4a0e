import { parseGoDuration } from './go-duration.js';
import { parseTime } from './time.js';

/**
 * The incidents' window, read once for every reader: `kevents incidents`
 * (--since, --since-time, --until, --look-back), the served route (`since`,
 * `until`, `lookBack`) and the web UI (a duration back from now) all turn
 * their parameters into an IncidentWindow here, and the CLI and the UI send
 * the route exactly what incidentQueryParams writes.
 */

/** DEFAULT_LOOK_BACK_MS is how far before a window incidents read the archive for causes, roots and starts: a day holds a failure that began overnight. */
export const DEFAULT_LOOK_BACK_MS = 24 * 3_600_000;

/** MAX_LOOK_BACK_MS bounds the look-back, so no window makes a read of the whole archive: a week. */
export const MAX_LOOK_BACK_MS = 7 * 24 * 3_600_000;

/** IncidentWindowParams are the window as given: each a text, as a flag or a query parameter carries it. */
export interface IncidentWindowParams {
  /** since is a duration back from `now` (`30m`, `24h`). */
  since?: string | undefined;
  /** sinceTime is an RFC 3339 time; at most one of since and sinceTime. */
  sinceTime?: string | undefined;
  /** until is an RFC 3339 time, after the window's start. */
  until?: string | undefined;
  /** lookBack is a duration (`0` reads nothing before the window; default DEFAULT_LOOK_BACK_MS, at most MAX_LOOK_BACK_MS). */
  lookBack?: string | undefined;
}

/** IncidentWindow is the normalised window: Unix ms (since inclusive, until exclusive, undefined when open) and the look-back in ms. */
export interface IncidentWindow {
  since?: number | undefined;
  until?: number | undefined;
  lookBack: number;
}

/**
 * IncidentWindowError is a parameter that does not read: `param` names it
 * (`since`, `sinceTime`, `until`, `lookBack`) and `conflictsWith` the one it
 * may not be given with; the message says why after the name. Each reader
 * names them its own way (`--since-time`, a 400's `since`).
 */
export class IncidentWindowError extends Error {
  readonly param: keyof IncidentWindowParams;
  readonly conflictsWith: keyof IncidentWindowParams | undefined;
  constructor(param: keyof IncidentWindowParams, message: string, conflictsWith?: keyof IncidentWindowParams) {
    super(message);
    this.name = 'IncidentWindowError';
    this.param = param;
    this.conflictsWith = conflictsWith;
  }
}

/** isIncidentWindowError tells an IncidentWindowError by its shape. */
export function isIncidentWindowError(e: unknown): e is IncidentWindowError {
  return e instanceof Error && e.name === 'IncidentWindowError' && typeof (e as { param?: unknown }).param === 'string';
}

function duration(param: 'since' | 'lookBack', text: string): number {
  try {
    return parseGoDuration(text);
  } catch (e) {
    throw new IncidentWindowError(param, (e as Error).message);
  }
}

function time(param: 'sinceTime' | 'until', text: string): number {
  try {
    return parseTime(text);
  } catch {
    throw new IncidentWindowError(param, `${JSON.stringify(text)} is not an RFC 3339 time such as 2025-01-31T14:00:00Z`);
  }
}

const given = (s: string | undefined): s is string => s !== undefined && s !== '';

/**
 * incidentWindow normalises a window's parameters, `now` anchoring `since`:
 * the one reading of them behind the CLI, the route and the UI. It throws an
 * IncidentWindowError for what does not read.
 */
export function incidentWindow(p: IncidentWindowParams, now: number): IncidentWindow {
  if (given(p.since) && given(p.sinceTime)) throw new IncidentWindowError('sinceTime', 'may not be given with since', 'since');
  const w: IncidentWindow = { lookBack: DEFAULT_LOOK_BACK_MS };
  if (given(p.since)) {
    const ms = duration('since', p.since);
    if (ms <= 0) throw new IncidentWindowError('since', 'must be a positive duration such as 2h or 30m');
    w.since = now - ms;
  }
  if (given(p.sinceTime)) w.since = time('sinceTime', p.sinceTime);
  if (given(p.until)) w.until = time('until', p.until);
  if (w.since !== undefined && w.until !== undefined && w.until <= w.since) throw new IncidentWindowError('until', 'must be after the start of the window');
  if (given(p.lookBack)) {
    const ms = duration('lookBack', p.lookBack);
    if (ms > MAX_LOOK_BACK_MS) throw new IncidentWindowError('lookBack', `must be at most ${MAX_LOOK_BACK_MS / 86_400_000}d`);
    w.lookBack = ms;
  }
  return w;
}

/** incidentReadSince is where incidents start reading: the look-back before the window's start (undefined: an open window reads everything). */
export function incidentReadSince(w: IncidentWindow): number | undefined {
  return w.since === undefined ? undefined : w.since - w.lookBack;
}

/**
 * incidentQueryParams writes a window (and clusters) as the incidents route
 * reads them: `since`, `until` (RFC 3339, to the millisecond), `lookBack` (in
 * seconds, Go syntax) and `cluster` (repeated); a window open at its start is
 * `fieldSelector=window=all`, since the route reads the last hour when given no
 * start (what `kubectl get incidents` asks). What the CLI and the web UI send.
 */
export function incidentQueryParams(w: IncidentWindow, clusters: readonly string[] = []): URLSearchParams {
  const p = new URLSearchParams();
  if (w.since !== undefined) p.set('since', new Date(w.since).toISOString());
  else p.set('fieldSelector', 'window=all');
  if (w.until !== undefined) p.set('until', new Date(w.until).toISOString());
  if (w.lookBack !== DEFAULT_LOOK_BACK_MS) p.set('lookBack', `${w.lookBack / 1000}s`);
  for (const c of clusters) p.append('cluster', c);
  return p;
}

/**
 * parseIncidentQueryParams reads what incidentQueryParams writes: the route's
 * one parser of its window. `since` is a time on the wire, never a duration,
 * as a request is read at another moment than it was written; an error's
 * `param` is then `sinceTime`, which the route calls `since`.
 */
export function parseIncidentQueryParams(params: URLSearchParams): IncidentWindow {
  const text = (name: string): string | undefined => params.get(name) ?? undefined;
  return incidentWindow({ sinceTime: text('since'), until: text('until'), lookBack: text('lookBack') }, 0);
}
