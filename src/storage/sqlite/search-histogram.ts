import type { FieldTerm, SearchMatcher } from '../../api/index.js';
import { searchTimeMs } from '../../api/index.js';
import type Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import { countInHistogram, histogramBuckets } from '../search/index.js';
import type { SearchBucket, SearchRequest } from '../search/index.js';
import { storedTexts } from './texts.js';
import { columnConditions } from './search-columns.js';
import { internedValues } from './interned.js';

/** Candidate is one version the search index found: its docid, revision, key and stored object. */
export interface Candidate {
  docid: number;
  rv: number;
  key: string;
  object: Buffer;
}

/** SearchScope is what every read of one search binds: the revision, the index's high-water mark, and the key range of its namespace. */
export interface SearchScope {
  at: number;
  /** indexed is the index's high-water mark as the search read it (at most `at`): the index's reads hold the versions at or below it. */
  indexed: number;
  nsLow: string;
  nsHigh: string;
}

/** HistogramInput is one search as the index reads it, for its histogram. */
export interface HistogramInput {
  request: SearchRequest;
  /** match is the FTS5 expression of the query, undefined when the candidates are every version. */
  match: string | undefined;
  matcher: SearchMatcher;
  scope: SearchScope;
  /** textExact says the match finds exactly the versions whose text holds the query's words and phrases, and none other (unicode61). */
  textExact: boolean;
  /** slots is how many docids one second of last time holds: a docid divided by it is the second. */
  slots: number;
  /** second is the second a time's docids start at. */
  second: (timeMs: number) => number;
  /** from is the FROM and WHERE of the candidates (`fromCandidates`). */
  from: (byMatch: boolean) => string;
  /** shared is the FROM and WHERE of the candidates that share a matching entry (`fromShared`), read besides a match's. */
  shared: () => string;
}

/**
 * MAX_HISTOGRAM_EXAMINED bounds the candidates a histogram decodes when SQL
 * cannot decide its query alone (a `name:`, `node:` or `controller:` term, or
 * a word outside ASCII): past it the histogram is a lower bound.
 */
export const MAX_HISTOGRAM_EXAMINED = 100_000;

/** HISTOGRAM_CHUNK is how many candidates a histogram decodes between two pauses: a few ms of the event loop's time. */
const HISTOGRAM_CHUNK = 512;

const ASCII_WORD = /^[a-z0-9]+$/;

/**
 * searchHistogram counts every hit of the window (the whole search, not the
 * page) per bucket. Where SQL decides the query (its words and phrases in the
 * FTS5 match, ASCII; its fields on the row's columns) it counts the hits of each
 * second of last time from the docids, without decoding them, and decodes only
 * the candidates of the seconds a bucket's edge cuts in two. Otherwise it
 * decodes and checks each candidate, up to MAX_HISTOGRAM_EXAMINED, HISTOGRAM_CHUNK
 * at a time with a `pause` between two, so that it never holds the event loop long. The SQL count runs as
 * many statements over consecutive ranges of seconds (`nextStep`), with a `pause` between two, for the same
 * reason: one statement over a common word's every hit held the loop for seconds.
 */
export async function searchHistogram(db: Database.Database, input: HistogramInput, pause: () => Promise<void>): Promise<SearchBucket[]> {
  const { request, match, matcher, scope, slots } = input;
  const h = request.histogram!;
  const buckets = histogramBuckets(h);
  const lo = Math.max(h.sinceMs, request.query.sinceMs ?? h.sinceMs);
  const hi = Math.min(h.untilMs, request.query.untilMs ?? h.untilMs);
  if (!(hi > lo)) return buckets;
  const params: Record<string, string | number> = { ...scope, low: input.second(lo) * slots, high: (input.second(hi - 1) + 1) * slots };
  if (match !== undefined) params.match = match;
  const fields = request.query.terms.filter((t): t is FieldTerm => t.kind === 'field');
  const text = request.query.terms.filter((t) => t.kind === 'text');
  const columns = columnConditions(fields, params, internedValues(db));
  const exact = columns !== undefined && (text.length === 0 || (match !== undefined && input.textExact && text.every((t) => t.words.every((w) => ASCII_WORD.test(w)))));
  // Each read runs over the index's candidates, and with a match over the versions sharing a matching entry too.
  const reads = [{ where: [input.from(match !== undefined), ...(exact ? columns : [])].join(' AND '), docid: match === undefined ? 'd.docid' : 'f.rowid' }];
  if (match !== undefined) reads.push({ where: [input.shared(), ...(exact ? columns : [])].join(' AND '), docid: 'd.docid' });
  const texts = storedTexts(db);
  const count = (rows: Candidate[]): void => {
    for (const row of rows) {
      const event = JSON.parse(texts.json(row.object)) as CoreEvent;
      if (matcher.matches(event) !== undefined) countInHistogram(buckets, h, searchTimeMs(event));
    }
  };
  const statements = reads.map(({ where, docid }) =>
    db.prepare<Record<string, string | number>, Candidate>(`SELECT ${docid} AS docid, v.rv AS rv, v.key AS key, v.object AS object ${where} ORDER BY ${docid} DESC LIMIT @limit`),
  );
  if (!exact) {
    let examined = 0;
    for (const candidates of statements) {
      for (let high = params.high as number; examined < MAX_HISTOGRAM_EXAMINED; ) {
        const rows = candidates.all({ ...params, high, limit: HISTOGRAM_CHUNK });
        count(rows);
        examined += rows.length;
        if (rows.length < HISTOGRAM_CHUNK) break;
        high = rows[rows.length - 1]!.docid;
        await pause();
      }
    }
    return buckets;
  }
  // A second holding an edge (of the window or a bucket) has hits on both sides of it: those are decoded.
  const cut = new Set<number>();
  for (let edge = h.sinceMs; edge <= h.untilMs; edge += h.bucketMs) if (edge % 1000 !== 0) cut.add(Math.floor(edge / 1000));
  for (const edge of [lo, hi, h.untilMs]) if (edge % 1000 !== 0) cut.add(Math.floor(edge / 1000));
  const first = input.second(lo);
  const end = input.second(hi - 1) + 1;
  for (const { where, docid } of reads) {
    const perSecond = db.prepare<Record<string, string | number>, { s: number; n: number }>(`SELECT ${docid} / ${slots} AS s, count(*) AS n ${where} GROUP BY s`);
    let step = Math.max(1, Math.ceil(h.bucketMs / 1000));
    for (let from = first; from < end; ) {
      const to = Math.min(end, from + step);
      let hits = 0;
      for (const { s, n } of perSecond.iterate({ ...params, low: from * slots, high: to * slots })) {
        hits += n;
        if (cut.has(s) || s * 1000 < lo || s * 1000 >= hi) continue;
        const b = buckets[Math.floor((s * 1000 - h.sinceMs) / h.bucketMs)];
        if (b !== undefined) b.hits += n;
      }
      step = nextStep(step, hits, to - from);
      from = to;
      if (from < end) await pause();
    }
  }
  for (const candidates of statements) {
    for (const s of cut) {
      if (s * 1000 + 999 >= lo && s * 1000 < hi) {
        count(candidates.all({ ...params, low: s * slots, high: (s + 1) * slots, limit: -1 }));
        await pause();
      }
    }
  }
  return buckets;
}

/**
 * HITS_PER_COUNT is about how many hits one counting statement of a histogram covers: the statement cannot be
 * paused, and its time follows its hits (each joined to its version), plus a part that does not shrink with its
 * range (FTS5 reads a common word's whole list of documents), so it is steered by hits, not by time.
 */
const HITS_PER_COUNT = 8_192;

/** MAX_STEP_SECONDS is the widest range of seconds one counting statement covers: a year. */
const MAX_STEP_SECONDS = 86_400 * 366;

/**
 * nextStep is the seconds of docids the next counting statement covers, from the `hits` the last one counted
 * over `covered` seconds: as many seconds as held about HITS_PER_COUNT hits at that rate (at least one), growing
 * at most fourfold a statement where hits are sparse, so that a common word over a long window is counted in
 * statements of bounded size with the event loop let go between two, and a rare one in few.
 */
export function nextStep(step: number, hits: number, covered: number): number {
  const fitting = Math.floor((covered * HITS_PER_COUNT) / Math.max(hits, 1));
  return Math.max(1, Math.min(fitting, step * 4, MAX_STEP_SECONDS));
}
