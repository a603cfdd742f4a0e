import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CoreEvent, Occurrence } from '../api/index.js';
import { buildTimeline } from './build-timeline.js';
import { decompressEvent } from './occurrence-rows.js';
import { T0 } from '../../test/support/timeline-events.js';

/**
 * Properties of decompression over generated histories: an event that
 * happened N times at known true times, recorded by an archive that saw some
 * of its states (from the start or late, with gaps as after a 410), through
 * either API, with times missing, null or zero. Whatever the history, the rows
 * account for every occurrence, stay within the times the data gives, start at
 * the first known time, are observed exactly where a recorded change says when
 * it happened, and do not depend on the order they were read in.
 */

const ZERO = '0001-01-01T00:00:00Z';

/** History is a generated event with the true times of its occurrences. */
interface History {
  event: CoreEvent;
  occurrences: Occurrence[];
  /** times are the true times (Unix ms) of occurrences 1..N. */
  times: number[];
  /** firstStated and lastStated tell whether the event gives its first and last times. */
  firstStated: boolean;
  lastStated: boolean;
  /** creationMs is the event's creation time, when it has one. */
  creationMs: number | undefined;
}

const second = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const micro = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');

const historyArb = (name: string): fc.Arbitrary<History> =>
  fc
    .record({
      api: fc.constantFrom('core' as const, 'series' as const),
      start: fc.integer({ min: 0, max: 86_400 }),
      fraction: fc.integer({ min: 0, max: 999 }),
      gaps: fc.array(fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 3600 })), { maxLength: 40 }),
      recorded: fc.array(fc.boolean(), { minLength: 41, maxLength: 41 }),
      listedFresh: fc.boolean(),
      missingFirst: fc.constantFrom('no', 'null', 'zero'),
      missingLast: fc.constantFrom('no', 'no', 'null', 'zero'),
      missingLastSeen: fc.array(fc.constantFrom('no', 'no', 'no', 'null', 'zero'), { minLength: 41, maxLength: 41 }),
      creation: fc.boolean(),
      delays: fc.array(fc.integer({ min: 0, max: 7200_000 }), { minLength: 41, maxLength: 41 }),
    })
    .map((g): History => {
      const n = g.gaps.length + 1;
      const base = T0 + g.start * 1000 + (g.api === 'series' ? g.fraction : 0);
      const times: number[] = [base];
      for (const gap of g.gaps) times.push(times[times.length - 1]! + gap * 1000);
      const stamp = g.api === 'series' ? micro : second;
      const at = (ms: number, missing: string): string | null => (missing === 'null' ? null : missing === 'zero' ? ZERO : stamp(ms));
      const first = at(times[0]!, g.missingFirst);
      const last = at(times[n - 1]!, g.missingLast);
      // creationTimestamp is a metav1.Time: whole seconds.
      const creationMs = g.creation ? Date.parse(second(times[0]! + 1000)) : undefined;
      const event: CoreEvent = {
        metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(creationMs !== undefined ? { creationTimestamp: second(creationMs) } : {}) },
        involvedObject: { kind: 'Pod', namespace: 'default', name: `pod-${name}` },
        reason: 'BackOff',
        message: `back-off ${name}`,
        type: 'Warning',
        source: { component: 'kubelet' },
        ...(g.api === 'core'
          ? { firstTimestamp: first, lastTimestamp: last, count: n }
          : { firstTimestamp: null, lastTimestamp: null, eventTime: first, ...(n > 1 ? { series: { count: n, lastObservedTime: last as string } } : {}) }),
      };
      const occurrences: Occurrence[] = [];
      let before = 0;
      for (let k = 1; k <= n; k++) {
        if (!g.recorded[k - 1]) continue;
        const countBefore = occurrences.length === 0 && g.listedFresh ? 0 : before;
        occurrences.push({
          metadata: { name: `${name}.${occurrences.length + 1}`, namespace: 'default' },
          event: { name, namespace: 'default', uid: `uid-${name}` },
          observedTime: micro(times[k - 1]! + g.delays[k - 1]!),
          lastSeen: at(times[k - 1]!, g.missingLastSeen[k - 1]!),
          countBefore,
          countAfter: k,
          regarding: event.involvedObject,
        });
        before = k;
      }
      return {
        event,
        occurrences,
        times,
        firstStated: g.missingFirst === 'no',
        // A series of one has no last time of its own.
        lastStated: g.missingLast === 'no' && (g.api === 'core' || n > 1),
        creationMs,
      };
    });

const statedMs = (t: string | null | undefined): number | undefined => (t === null || t === undefined || t === ZERO ? undefined : Date.parse(t));

/** knownTimes are every time the data gives: the event's, its creation, and each change's last-seen and observed times. */
function knownTimes(h: History): number[] {
  const out: number[] = [];
  if (h.firstStated) out.push(h.times[0]!);
  if (h.lastStated) out.push(h.times[h.times.length - 1]!);
  if (h.creationMs !== undefined) out.push(h.creationMs);
  for (const o of h.occurrences) {
    const seen = statedMs(o.lastSeen);
    if (seen !== undefined) out.push(seen);
    out.push(Date.parse(o.observedTime ?? ''));
  }
  return out;
}

/** expectedObserved are the times of the rows that must be observed: the first time, and each recorded change's last-seen time. */
function expectedObserved(h: History): number[] {
  const out: number[] = [];
  if (h.firstStated) out.push(h.times[0]!);
  const states = h.occurrences.map((o) => ({ count: o.countAfter, ms: statedMs(o.lastSeen) }));
  const n = h.times.length;
  if (states.length === 0 || states[states.length - 1]!.count < n) states.push({ count: n, ms: h.lastStated ? h.times[n - 1] : undefined });
  let placed = 0;
  for (const s of states) {
    if (s.count <= placed) continue;
    const onlyTheFirst = placed === 0 && s.count === 1 && h.firstStated;
    placed = s.count;
    if (!onlyTheFirst && s.ms !== undefined) out.push(s.ms);
  }
  return out.sort((a, b) => a - b);
}

const RUNS = { numRuns: 400 };

describe('decompression properties over generated histories', () => {
  it('accounts for every occurrence: the counts of an event\'s rows sum to its count', () => {
    fc.assert(
      fc.property(historyArb('e'), (h) => {
        const { entries, undated } = decompressEvent(h.event, h.occurrences);
        assert.equal(entries.reduce((n, r) => n + r.count, 0) + undated, h.times.length);
        // Only an event with no time at all, and no history, leaves occurrences undated.
        if (knownTimes(h).length > 0) assert.equal(undated, 0);
      }),
      RUNS,
    );
  });

  it('puts no row outside the times the data gives, nor an estimated row outside its own bounds', () => {
    fc.assert(
      fc.property(historyArb('e'), (h) => {
        const { entries } = decompressEvent(h.event, h.occurrences);
        const known = knownTimes(h);
        if (known.length === 0) return;
        const lo = Math.min(...known);
        const hi = Math.max(...known);
        for (const r of entries) {
          assert.ok(r.ms >= lo && r.ms <= hi, `row at ${r.ms} outside [${lo}, ${hi}]`);
          if (r.estimated && r.earliestMs !== undefined) assert.ok(r.ms >= r.earliestMs);
          if (r.estimated && r.latestMs !== undefined) assert.ok(r.ms <= r.latestMs);
        }
        // With every time given, that is the event's own [first, last].
        if (h.firstStated && h.lastStated && h.occurrences.every((o) => statedMs(o.lastSeen) !== undefined)) {
          for (const r of entries) assert.ok(r.ms >= h.times[0]! && r.ms <= h.times[h.times.length - 1]!);
        }
      }),
      RUNS,
    );
  });

  it('starts at the first known time: the event\'s first time, observed, when it gives one', () => {
    fc.assert(
      fc.property(historyArb('e'), (h) => {
        const { entries } = decompressEvent(h.event, h.occurrences);
        if (!h.firstStated) return;
        assert.equal(entries[0]!.ms, h.times[0]);
        assert.equal(entries[0]!.estimated, false);
        assert.ok(entries.every((r) => r.ms >= h.times[0]!));
      }),
      RUNS,
    );
  });

  it('observes exactly the recorded changes, each one occurrence at a true time; everything else is estimated', () => {
    fc.assert(
      fc.property(historyArb('e'), (h) => {
        const { entries } = decompressEvent(h.event, h.occurrences);
        const observed = entries.filter((r) => !r.estimated);
        assert.deepEqual(observed.map((r) => r.ms).sort((a, b) => a - b), expectedObserved(h));
        const truth = new Set(h.times);
        for (const r of observed) {
          assert.equal(r.count, 1);
          assert.ok(truth.has(r.ms), `an observed row at ${r.ms} is at no true time`);
        }
      }),
      RUNS,
    );
  });

  it('gives the same timeline whatever order the events and occurrences are read in, and with overlapping reads', () => {
    const setArb = fc.tuple(historyArb('a'), historyArb('b'), historyArb('c'), fc.array(fc.nat(), { minLength: 8, maxLength: 8 }), fc.nat());
    fc.assert(
      fc.property(setArb, ([a, b, c, keys, dup]) => {
        const events = [a.event, b.event, c.event];
        const occurrences = [...a.occurrences, ...b.occurrences, ...c.occurrences];
        const expected = buildTimeline({ events, occurrences });
        const shuffle = <T>(xs: T[]): T[] => xs.map((x, i) => ({ x, k: keys[i % keys.length]! * 31 + i * (keys[(i + 3) % keys.length]! % 7) })).sort((p, q) => p.k - q.k).map((p) => p.x);
        const reread = [...occurrences, ...occurrences.slice(0, dup % (occurrences.length + 1))];
        const again = buildTimeline({ events: shuffle([...events, events[dup % 3]!]), occurrences: shuffle(reread).reverse() });
        assert.deepEqual(again, expected);
      }),
      { numRuns: 200 },
    );
  });
});
