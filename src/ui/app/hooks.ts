import { useEffect, useRef, useState } from 'preact/hooks';
import type { IncidentList, Timeline } from '../../api/index.js';
import { getIncidents, getTimeline } from './client.js';
import type { IncidentQuery, TimelineQuery } from './client.js';
import type { EventCache } from './event-cache.js';

/**
 * useCache re-renders on cache changes, at most once per `minIntervalMs`, so an
 * expensive view (the dashboard) is not recomputed ten times a second.
 */
export function useCache(cache: EventCache, minIntervalMs = 0): EventCache {
  const [, setTick] = useState(0);
  useEffect(() => {
    let last = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const fire = (): void => {
      timer = undefined;
      last = performance.now();
      setTick((n) => n + 1);
    };
    const unsubscribe = cache.subscribe(() => {
      const wait = last + minIntervalMs - performance.now();
      if (wait <= 0) fire();
      else timer ??= setTimeout(fire, wait);
    });
    return () => {
      unsubscribe();
      clearTimeout(timer);
    };
  }, [cache, minIntervalMs]);
  return cache;
}

/**
 * useChanges re-renders on cache changes, at most once per `minIntervalMs`, and
 * counts them: a view that asks the server again when events change keys its
 * request on the count.
 */
export function useChanges(cache: EventCache, minIntervalMs: number): number {
  useCache(cache, minIntervalMs);
  const changes = useRef({ rows: cache.rows, n: 0 });
  if (changes.current.rows !== cache.rows) changes.current = { rows: cache.rows, n: changes.current.n + 1 };
  return changes.current.n;
}

/** useNow is the wall clock, refreshed every `stepMs`, for ages and moving windows. */
export function useNow(stepMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), stepMs);
    return () => clearInterval(timer);
  }, [stepMs]);
  return now;
}

/** useMedia tracks a CSS media query. */
export function useMedia(query: string): boolean {
  const [match, setMatch] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const mql = matchMedia(query);
    const on = (): void => setMatch(mql.matches);
    mql.addEventListener('change', on);
    return () => mql.removeEventListener('change', on);
  }, [query]);
  return match;
}

/** TimelineState is the server's timeline for a view; the last good one stays shown while the next loads. */
export type TimelineState =
  | { phase: 'loading'; timeline?: Timeline }
  | { phase: 'error'; message: string; timeline?: Timeline }
  | { phase: 'ok'; timeline: Timeline };

/** useTimeline asks the server for a window's timeline, again whenever `key` changes. */
export function useTimeline(query: Omit<TimelineQuery, 'signal'>, key: string): TimelineState {
  const [state, setState] = useState<TimelineState>({ phase: 'loading' });
  const queryRef = useRef(query);
  queryRef.current = query;
  useEffect(() => {
    const abort = new AbortController();
    getTimeline({ ...queryRef.current, signal: abort.signal }).then(
      (timeline) => setState({ phase: 'ok', timeline }),
      (e: unknown) => {
        if (!abort.signal.aborted) setState((s) => ({ phase: 'error', message: e instanceof Error ? e.message : String(e), ...(s.timeline !== undefined ? { timeline: s.timeline } : {}) }));
      },
    );
    return () => abort.abort();
  }, [key]);
  return state;
}

/** IncidentsState is the server's incidents for a view; the last good list stays shown while the next loads. */
export type IncidentsState =
  | { phase: 'loading'; list?: IncidentList }
  | { phase: 'error'; message: string; list?: IncidentList }
  | { phase: 'ok'; list: IncidentList };

/** Preloaded is a list already read for a key (the landing page's), shown without asking twice while it is recent. */
export interface Preloaded {
  key: string;
  list: IncidentList;
  /** at is when it was read (Unix ms). */
  at: number;
}

/**
 * useIncidents asks the server for a window's incidents whenever `key`
 * changes and every `refreshMs` after; `query` is called at each request, so
 * a moving window moves.
 */
export function useIncidents(query: () => Omit<IncidentQuery, 'signal'>, key: string, refreshMs: number, preloaded?: Preloaded): IncidentsState {
  const fresh = preloaded !== undefined && preloaded.key === key && Date.now() - preloaded.at < refreshMs;
  const [state, setState] = useState<IncidentsState>(fresh ? { phase: 'ok', list: preloaded.list } : { phase: 'loading' });
  const queryRef = useRef(query);
  queryRef.current = query;
  const skip = useRef(fresh);
  useEffect(() => {
    let abort: AbortController | undefined;
    const load = (): void => {
      abort?.abort();
      const mine = new AbortController();
      abort = mine;
      setState((s) => (s.list !== undefined ? { phase: 'loading', list: s.list } : { phase: 'loading' }));
      getIncidents({ ...queryRef.current(), signal: mine.signal }).then(
        (list) => {
          if (!mine.signal.aborted) setState({ phase: 'ok', list });
        },
        (e: unknown) => {
          if (!mine.signal.aborted) setState((s) => ({ phase: 'error', message: e instanceof Error ? e.message : String(e), ...(s.list !== undefined ? { list: s.list } : {}) }));
        },
      );
    };
    if (skip.current) skip.current = false;
    else load();
    const timer = setInterval(load, refreshMs);
    return () => {
      clearInterval(timer);
      abort?.abort();
    };
  }, [key, refreshMs]);
  return state;
}
