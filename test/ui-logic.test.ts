import { parseSearchQuery, searchTextMarks } from '../src/api/index.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent } from '../src/api/index.js';
import { lanesOf, marksFromTimeline, topTallies } from '../src/ui/app/aggregate.js';
import { formatTimeline } from '../src/print/index.js';
import { buildTimeline } from '../src/timeline/index.js';
import { foldRuns } from '../src/api/row-runs.js';
import { bucketSizeFor, countTicks, stackBuckets } from '../src/ui/app/buckets.js';
import { interval } from '../src/ui/app/format.js';
import { EMPTY_FILTERS, isFiltered, newerFirst, rowMatcher, toRow } from '../src/ui/app/model.js';
import { formatRoute, parseRoute } from '../src/ui/app/route.js';
import { incidentMatcher, incidentTimeline, rootObjectKey } from '../src/ui/app/incident-list.js';
import { estimateSpan } from '../src/ui/app/format.js';
import type { Incident } from '../src/api/index.js';
import { histogramBuckets, serverQuery } from '../src/ui/app/search-query.js';
import { markParts } from '../src/ui/app/search-marks.js';
import { spliceSorted } from '../src/ui/app/splice-sorted.js';
import { FIRST_PAGE_URL } from '../src/ui/app/event-cache.js';
import { readFileSync } from 'node:fs';

const T0 = Date.parse('2026-06-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function ev(o: {
  name: string;
  ns?: string;
  kind?: string;
  object?: string;
  reason?: string;
  type?: string;
  message?: string;
  count?: number;
  first: number;
  last: number;
  cluster?: string;
}): CoreEvent {
  return {
    metadata: {
      name: o.name,
      namespace: o.ns ?? 'default',
      uid: `uid-${o.name}`,
      resourceVersion: '1',
      // As the mirror labels what it archives (src/mirror/archived-event.ts).
      ...(o.cluster !== undefined ? { labels: { 'archive.kevents.io/cluster': o.cluster } } : {}),
    },
    involvedObject: { kind: o.kind ?? 'Pod', namespace: o.ns ?? 'default', name: o.object ?? 'web-1' },
    reason: o.reason ?? 'BackOff',
    type: o.type ?? 'Warning',
    message: o.message ?? 'Back-off restarting failed container',
    count: o.count ?? 1,
    firstTimestamp: iso(o.first),
    lastTimestamp: iso(o.last),
    source: { component: 'kubelet' },
  };
}

/** timelineMarks are the marks the UI draws for events: the rows the server's timeline builds of them. */
function timelineMarks(events: CoreEvent[]) {
  return marksFromTimeline(buildTimeline({ events }).rows);
}

describe('toRow', () => {
  it('reads times as describe does: eventTime first, series for last and count', () => {
    const r = toRow({
      metadata: { name: 'a', namespace: 'ns', uid: 'u' },
      involvedObject: { kind: 'Pod', name: 'p' },
      eventTime: '2026-06-01T10:00:00.000000Z',
      series: { count: 7, lastObservedTime: '2026-06-01T10:05:00.000000Z' },
      reportingComponent: 'default-scheduler',
    });
    assert.deepEqual([r.first, r.last, r.count, r.from, r.objectKey], [T0, T0 + 300_000, 7, 'default-scheduler', 'Pod/ns/p']);
  });
  it('reads the cluster an event was archived from off its label, none for a local write', () => {
    assert.equal(toRow(ev({ name: 'a', cluster: 'prod-eu', first: T0, last: T0 })).cluster, 'prod-eu');
    assert.equal(toRow(ev({ name: 'b', first: T0, last: T0 })).cluster, '');
  });
  it('treats a missing lastTimestamp as the first time and a zero count as one', () => {
    const r = toRow({ metadata: { name: 'a', namespace: 'ns' }, involvedObject: {}, firstTimestamp: iso(T0), count: 0 });
    assert.deepEqual([r.first, r.last, r.count], [T0, T0, 1]);
  });
});

describe('rowMatcher', () => {
  const row = toRow(ev({ name: 'a', ns: 'shop', kind: 'Pod', reason: 'FailedScheduling', message: '0/3 nodes are available: 3 Insufficient cpu.', first: T0, last: T0, cluster: 'prod' }));
  const cases: [string, Partial<typeof EMPTY_FILTERS>, boolean][] = [
    ['no filters', {}, true],
    ['cluster exact', { cluster: 'prod' }, true],
    ['other cluster', { cluster: 'staging' }, false],
    ['cluster prefix is not a match', { cluster: 'pro' }, false],
    ['cluster and namespace together', { cluster: 'prod', namespace: 'shop' }, true],
    ['cluster right, namespace wrong', { cluster: 'prod', namespace: 'batch' }, false],
    ['namespace exact', { namespace: 'shop' }, true],
    ['namespace prefix is not a match', { namespace: 'sho' }, false],
    ['kind ignores case', { kind: 'pod' }, true],
    ['other kind', { kind: 'Node' }, false],
    ['type ignores case', { type: 'warning' }, true],
    ['other type', { type: 'Normal' }, false],
    ['reason exact', { reason: 'FailedScheduling' }, true],
    ['reason is not a substring match', { reason: 'Failed' }, false],
    ['free text in the message, any case, all words', { q: 'insufficient CPU' }, true],
    ['free text matches the object name', { q: 'web-1' }, true],
    ['free text with a missing word', { q: 'insufficient memory' }, false],
  ];
  for (const [name, f, want] of cases) {
    it(name, () => assert.equal(rowMatcher({ ...EMPTY_FILTERS, ...f })(row), want));
  }
  it('keeps local writes out of a picked cluster', () => {
    assert.equal(rowMatcher({ ...EMPTY_FILTERS, cluster: 'prod' })(toRow(ev({ name: 'local', first: T0, last: T0 }))), false);
  });
  it('counts a picked cluster as a filter', () => {
    assert.equal(isFiltered(EMPTY_FILTERS), false);
    assert.equal(isFiltered({ ...EMPTY_FILTERS, cluster: 'prod' }), true);
    assert.equal(isFiltered({ ...EMPTY_FILTERS, q: '  ' }), false);
  });
});

describe('interval', () => {
  it('shows repeats as kubectl describe does', () => {
    const r = toRow(ev({ name: 'a', count: 12, first: T0, last: T0 + 9 * 60_000 }));
    assert.equal(interval(r, T0 + 10 * 60_000), '60s (x12 over 10m)');
  });
});

describe('bar chart buckets', () => {
  const cases: [string, number, number][] = [
    ['15m', 15 * 60_000, 30_000],
    ['1h', 3600_000, 2 * 60_000],
    ['6h', 6 * 3600_000, 10 * 60_000],
    ['24h', 24 * 3600_000, 30 * 60_000],
    ['7d', 7 * 24 * 3600_000, 6 * 3600_000],
  ];
  for (const [name, windowMs, want] of cases) {
    it(`draws ${name} in bars of ${want / 1000} s, at most 48 of them`, () => {
      assert.equal(bucketSizeFor(windowMs), want);
      assert.ok(windowMs / want <= 48 && windowMs / want >= 24);
    });
  }
  it('ticks the y axis in whole numbers, never fewer than one step', () => {
    assert.deepEqual(countTicks(0), [0, 1]);
    assert.deepEqual(countTicks(1), [0, 1]);
    assert.deepEqual(countTicks(3), [0, 1, 2, 3]);
    assert.deepEqual(countTicks(7), [0, 2, 4, 6, 8]);
    assert.deepEqual(countTicks(23), [0, 5, 10, 15, 20, 25]);
    assert.deepEqual(countTicks(1234), [0, 500, 1000, 1500]);
    for (let m = 0; m < 5000; m += 37) {
      const t = countTicks(m);
      assert.ok(t.every(Number.isInteger) && t[t.length - 1]! >= m && t.length <= 6, `${m}: ${t.join(',')}`);
    }
  });
  it('stacks observed and estimated counts per group, folding the rest into other, every mark counted once', () => {
    const marks = timelineMarks([
      ev({ name: 'a', reason: 'BackOff', count: 10, first: T0, last: T0 + 540_000 }),
      ev({ name: 'b', reason: 'Unhealthy', count: 2, first: T0 + 60_000, last: T0 + 120_000 }),
      ev({ name: 'c', reason: 'Failed', first: T0 + 30_000, last: T0 + 30_000 }),
    ]);
    const s = stackBuckets(marks, T0, 60_000, 10, (m) => m.reason, 2);
    assert.deepEqual(s.groups, ['BackOff', 'Unhealthy', 'other']);
    assert.equal(s.total, 13);
    assert.equal(s.estimatedTotal, 8, 'the 8 repeats of BackOff between its first and last time');
    const sum = (a: number[][]) => a.flat().reduce((x, y) => x + y, 0);
    assert.equal(sum(s.observed) + sum(s.estimated), 13);
    assert.deepEqual([s.observed[0]![0], s.observed[0]![9]], [1, 1]);
    assert.equal(s.observed[2]![0], 1);
    assert.equal(s.starts.length, 10);
    assert.equal(s.max, Math.max(...s.starts.map((_, b) => s.groups.reduce((x, _g, g) => x + s.observed[g]![b]! + s.estimated[g]![b]!, 0))));
  });
});

describe('tallies, series and lanes', () => {
  const marks = timelineMarks([
    ev({ name: 'a', object: 'web-1', reason: 'BackOff', count: 4, first: T0, last: T0 + 180_000 }),
    ev({ name: 'b', object: 'web-2', reason: 'Unhealthy', first: T0 + 60_000, last: T0 + 60_000 }),
    ev({ name: 'c', kind: 'Node', object: 'node-1', reason: 'NodeNotReady', type: 'Normal', first: T0 - 60_000, last: T0 - 60_000 }),
  ]);
  it('ranks groups by total', () => {
    assert.deepEqual(topTallies(marks, (m) => m.reason, 2), [{ key: 'BackOff', n: 4 }, { key: 'NodeNotReady', n: 1 }]);
  });
  it('makes a lane per object in order of first mark', () => {
    const lanes = lanesOf(marks);
    assert.deepEqual(lanes.map((l) => [l.objectKey, l.total, l.warnings]), [
      ['Node/default/node-1', 1, 0],
      ['Pod/default/web-1', 4, 4],
      ['Pod/default/web-2', 1, 1],
    ]);
  });
});

describe('several clusters', () => {
  // One pod name in two clusters (the archive keeps the second event under another name), and a local write.
  const marks = timelineMarks([
    ev({ name: 'web-1.a', object: 'web-1', reason: 'BackOff', count: 3, first: T0, last: T0 + 2000, cluster: 'prod' }),
    ev({ name: 'web-1.b', object: 'web-1', reason: 'BackOff', first: T0 + 1000, last: T0 + 1000, cluster: 'staging' }),
    ev({ name: 'web-2.a', object: 'web-2', reason: 'Unhealthy', first: T0 + 3000, last: T0 + 3000 }),
  ]);
  it('marks carry the cluster of their row, and filter and tally by it', () => {
    assert.deepEqual(topTallies(marks, (m) => m.cluster, 5), [{ key: 'prod', n: 3 }, { key: '', n: 1 }, { key: 'staging', n: 1 }]);
    assert.equal(marks.filter(rowMatcher({ ...EMPTY_FILTERS, cluster: 'staging' })).reduce((n, m) => n + m.n, 0), 1);
  });
  it("makes a lane per object of each cluster: one pod name in two clusters is two lanes", () => {
    assert.deepEqual(lanesOf(marks).map((l) => [l.cluster, l.objectKey, l.total]), [
      ['prod', 'Pod/default/web-1', 3],
      ['staging', 'Pod/default/web-1', 1],
      ['', 'Pod/default/web-2', 1],
    ]);
  });
});

describe('newerFirst', () => {
  it('orders by last seen, then resourceVersion, events without time last', () => {
    const a = { ...toRow(ev({ name: 'a', first: T0, last: T0 })), rv: 1 };
    const b = { ...toRow(ev({ name: 'b', first: T0, last: T0 })), rv: 2 };
    const c = toRow(ev({ name: 'c', first: T0 + 1000, last: T0 + 1000 }));
    const d = { ...a, uid: 'd', last: NaN };
    assert.deepEqual([a, d, b, c].sort(newerFirst).map((r) => r.uid), ['uid-c', 'uid-b', 'uid-a', 'd']);
  });
});

describe('routes', () => {
  const cases: [string, string][] = [
    ['', '#/live'],
    ['#/live?ns=shop&type=Warning', '#/live?ns=shop&type=Warning'],
    ['#/dashboard?window=6h&by=kind&reason=BackOff', '#/dashboard?reason=BackOff&window=6h&by=kind'],
    ['#/dashboard?window=1h&by=reason', '#/dashboard'],
    ['#/dashboard?window=3y', '#/dashboard'],
    ['#/timeline?from=2026-06-01T10:00:00.000Z&to=2026-06-01T11:00:00.000Z&object=Pod%2Fshop%2Fweb-1', '#/timeline?from=2026-06-01T10%3A00%3A00.000Z&to=2026-06-01T11%3A00%3A00.000Z&object=Pod%2Fshop%2Fweb-1'],
    ['#/nowhere?q=a+b', '#/live?q=a+b'],
    ['#/live?ns=shop&cluster=prod-eu', '#/live?cluster=prod-eu&ns=shop'],
    ['#/dashboard?by=cluster&cluster=prod', '#/dashboard?cluster=prod&by=cluster'],
    ['#/dashboard?by=nonsense', '#/dashboard'],
    ['#/timeline?cluster=staging&object=Deployment%2Fshop%2Fweb', '#/timeline?cluster=staging&object=Deployment%2Fshop%2Fweb'],
    ['#/search?q=%22back-off%22+reason%3ABackOff&window=6h', '#/search?q=%22back-off%22+reason%3ABackOff&window=6h'],
    ['#/search?q=x&window=1h&by=kind', '#/search?q=x'],
    ['#/incidents', '#/incidents'],
    ['#/incidents?window=24h&ns=shop&cluster=prod&by=kind&from=2026-06-01T10:00:00.000Z', '#/incidents?cluster=prod&ns=shop&window=24h'],
    ['#/incidents?window=1h', '#/incidents'],
  ];
  for (const [hash, want] of cases) {
    it(`${hash || '(empty)'} round-trips as ${want}`, () => {
      assert.equal(formatRoute(parseRoute(hash)), want);
      assert.deepEqual(parseRoute(formatRoute(parseRoute(hash))), parseRoute(hash === '' ? '#/live' : want));
    });
  }
});

describe('incidents view', () => {
  const incident = (o: Partial<Incident> = {}): Incident => ({
    kind: 'create-forbidden-quota',
    cause: 'ReplicaSet "web-7d4b9c8f5" cannot create pods: ResourceQuota "compute-resources" would be exceeded.',
    facts: {},
    namespace: 'quota',
    root: 'Deployment/web',
    objects: ['Deployment/web', 'ReplicaSet/web-7d4b9c8f5'],
    start: { time: iso(T0), estimated: false },
    lastSeen: iso(T0 + 3_600_000),
    ongoing: false,
    occurrences: 14,
    hints: [],
    evidence: [{ time: iso(T0), estimated: false, object: 'ReplicaSet/web-7d4b9c8f5', namespace: 'quota', type: 'Warning', reason: 'FailedCreate', message: 'x', count: 14 }],
    ...o,
  });
  it('opens the root in its namespace over the incident and a tenth of its span either side, at least five minutes', () => {
    const r = incidentTimeline(incident(), '');
    assert.equal(formatRoute(r), `#/timeline?ns=quota&from=${encodeURIComponent(new Date(T0 - 6 * 60_000).toISOString())}&to=${encodeURIComponent(new Date(T0 + 66 * 60_000).toISOString())}&object=Deployment%2Fquota%2Fweb`);
    const short = incidentTimeline(incident({ lastSeen: iso(T0 + 60_000) }), '');
    assert.deepEqual([short.from, short.to], [T0 - 5 * 60_000, T0 + 6 * 60_000]);
  });
  it('follows now while ongoing, reaches back to an estimate\'s earliest bound, keeps the cluster, and opens a Node without a namespace', () => {
    const r = incidentTimeline(incident({ ongoing: true, cluster: 'prod-eu', start: { time: iso(T0), estimated: true, earliest: iso(T0 - 600_000), latest: iso(T0) } }), 'other');
    assert.equal(r.to, undefined);
    // From the earliest bound, less a tenth of the 70 minutes to its last sighting.
    assert.equal(r.from, T0 - 10 * 60_000 - 7 * 60_000);
    assert.equal(r.filters.cluster, 'prod-eu');
    assert.equal(incidentTimeline(incident({ cluster: undefined }), 'staging').filters.cluster, 'staging');
    assert.equal(rootObjectKey(incident({ root: 'Node/node-b', namespace: '' })), 'Node//node-b');
  });
  it('filters by a kind of any of its objects, a type or reason of its events, and words of its cause, objects and namespace', () => {
    const i = incident();
    const f = (o: Partial<typeof EMPTY_FILTERS>) => incidentMatcher({ ...EMPTY_FILTERS, ...o })(i);
    assert.equal(f({}), true);
    assert.equal(f({ kind: 'replicaset' }), true);
    assert.equal(f({ kind: 'Pod' }), false);
    assert.equal(f({ type: 'Warning' }), true);
    assert.equal(f({ type: 'Normal' }), false);
    assert.equal(f({ reason: 'failedcreate' }), true);
    assert.equal(f({ reason: 'BackOff' }), false);
    assert.equal(f({ q: 'COMPUTE-resources quota' }), true);
    assert.equal(f({ q: 'compute-resources shop' }), false);
  });
  it('says where an estimate lies from the bounds given, and no time where none is', () => {
    const now = T0;
    const at = (ms: number) => new Date(ms).toLocaleTimeString(undefined, { hour12: false });
    assert.equal(estimateSpan(iso(T0 - 60_000), iso(T0), now), `between ${at(T0 - 60_000)} and ${at(T0)}`);
    assert.equal(estimateSpan(iso(T0), iso(T0), now), `at ${at(T0)}`);
    assert.equal(estimateSpan(null, iso(T0), now), `before ${at(T0)}`);
    assert.equal(estimateSpan(iso(T0), undefined, now), `after ${at(T0)}`);
    assert.equal(estimateSpan(null, null, now), 'at a time the events do not give');
  });
});

describe('object panel', () => {
  it("folds runs of one event's repeats into one row, as kevents timeline's table does", () => {
    const t = buildTimeline({
      events: [
        ev({ name: 'a', object: 'web-1', reason: 'BackOff', count: 6, first: T0, last: T0 + 600_000 }),
        ev({ name: 'b', object: 'web-1', reason: 'Failed', message: 'Error: ErrImagePull', first: T0 + 300_000, last: T0 + 300_000 }),
        ev({ name: 'c', object: 'web-2', reason: 'BackOff', count: 3, first: T0 + 60_000, last: T0 + 120_000 }),
        // The kubelet's image back-off: its BackOff and Failed alternate at each retry, and fold into one run each.
        ev({ name: 'd', object: 'web-3', reason: 'BackOff', message: 'Back-off pulling image "web:v9"', count: 4, first: T0 + 700_000, last: T0 + 1_000_000 }),
        ev({ name: 'e', object: 'web-3', reason: 'Failed', message: 'Error: ImagePullBackOff', count: 4, first: T0 + 700_000, last: T0 + 1_000_000 }),
      ],
    });
    const runs = foldRuns(t.rows);
    assert.ok(runs.length < t.rows.length && runs.some((r) => r.rows > 1), 'some rows fold');
    assert.deepEqual(
      runs.filter((r) => r.first.object.endsWith('web-3')).map((r) => [r.first.reason, r.rows, r.count]),
      [['BackOff', 4, 4], ['Failed', 4, 4]],
      'alternating repeats fold',
    );
    assert.equal(runs.reduce((n, r) => n + r.count, 0), t.summary.occurrences, 'every occurrence is in a run');
    // The CLI's table (folded) has one line per run: its rows after the header, up to the blank line.
    const table = formatTimeline(t, { format: 'table', fold: true }).split('\n');
    const header = table.findIndex((l) => l.startsWith('TIME'));
    const lines = table.slice(header + 1, table.indexOf('', header));
    assert.equal(lines.length, runs.length);
    runs.forEach((r, i) => assert.match(lines[i]!, new RegExp(`${r.first.object}\\s+${r.rows > 1 ? `x${r.count} over` : String(r.count)}`)));
  });
});

describe('search view', () => {
  it('asks the server for the box\'s text, then the filter bar\'s picks as literal field terms', () => {
    assert.equal(serverQuery(EMPTY_FILTERS), '');
    assert.equal(serverQuery({ ...EMPTY_FILTERS, q: ' pull "image ' }), 'pull "image', 'the text first: the positions of its errors stay those of the box');
    assert.equal(
      serverQuery({ ...EMPTY_FILTERS, q: 'x509', kind: 'Pod', reason: 'Back"Off\\', type: 'Warning', cluster: 'prod*' }),
      'x509 kind:"Pod" reason:"Back\\"Off\\\\" type:"Warning" cluster:"prod*"',
    );
  });
  it('reads a served histogram as one series of the bar chart', () => {
    const h = histogramBuckets([{ time: '2026-06-01T10:00:00.000000Z', hits: 2 }, { time: '2026-06-01T10:01:00.000000Z', hits: 5 }], 60_000);
    assert.deepEqual(h, { starts: [T0, T0 + 60_000], bucketMs: 60_000, groups: ['hits'], observed: [[2, 5]], estimated: [[0, 0]], max: 5, total: 7, estimatedTotal: 0 });
  });
});

describe('search view marks', () => {
  /** bracketed writes a message's parts with the marked ones in brackets. */
  const bracketed = (parts: { text: string; marked: boolean }[]): string => parts.map((p) => (p.marked ? `[${p.text}]` : p.text)).join('');
  /** cliMarks is the same message marked as the CLI's table marks it (src/api/search-marks.ts). */
  const cliMarks = (q: string, text: string): string => {
    let out = '';
    let at = 0;
    for (const s of searchTextMarks(text, parseSearchQuery(q, { nowMs: T0 }))) {
      out += `${text.slice(at, s.start)}[${text.slice(s.start, s.end)}]`;
      at = s.end;
    }
    return out + text.slice(at);
  };
  const message = 'Back-off restarting failed container db in pod checkout-db-1_shop(5d1c): Back-off 5m0s; CERTS "x509" <b>bold</b>';
  const cases: [string, string][] = [
    ['certs', 'Back-off restarting failed container db in pod checkout-db-1_shop(5d1c): Back-off 5m0s; [CERTS] "x509" <b>bold</b>'],
    ['"back off" x509', '[Back-off] restarting failed container db in pod checkout-db-1_shop(5d1c): [Back-off] 5m0s; CERTS "[x509]" <b>bold</b>'],
    ['checkout-db -certs', 'Back-off restarting failed container db in pod [checkout-db]-1_shop(5d1c): Back-off 5m0s; CERTS "x509" <b>bold</b>'],
    ['"failed container" container', 'Back-off restarting [failed container] db in pod checkout-db-1_shop(5d1c): Back-off 5m0s; CERTS "x509" <b>bold</b>'],
    ['reason:BackOff name:checkout-db-* db', 'Back-off restarting failed container [db] in pod checkout-[db]-1_shop(5d1c): Back-off 5m0s; CERTS "x509" <b>bold</b>'],
    ['"restarting \\"failed\\"" b', 'Back-off [restarting failed] container db in pod checkout-db-1_shop(5d1c): Back-off 5m0s; CERTS "x509" <[b]>bold</[b]>'],
    ['cert', message],
    ['', message],
  ];
  /** served is what the search route sends as a hit's messageMarks for the query. */
  const served = (q: string, text: string): [number, number][] =>
    q === '' ? [] : searchTextMarks(text, parseSearchQuery(q, { nowMs: T0 })).map((m): [number, number] => [m.start, m.end]);
  for (const [q, want] of cases) {
    it(`marks what the CLI marks: ${q || '(no query)'}`, () => {
      const parts = markParts(message, served(q, message));
      assert.equal(parts.map((p) => p.text).join(''), message, 'the parts are the whole message');
      assert.equal(bracketed(parts), want);
      assert.equal(bracketed(parts), cliMarks(q, message));
    });
  }
  it('keeps the served spans on their words when the list trims the message', () => {
    const padded = `  \n${message} \t`;
    assert.equal(bracketed(markParts(padded, served('certs "back off"', padded))), cliMarks('certs "back off"', message));
    assert.deepEqual(markParts('  ', []), [{ text: '', marked: false }]);
  });
});

describe('spliceSorted', () => {
  it('equals removing and re-sorting, for random changes', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const mk = (i: number) => ({ ...toRow(ev({ name: `e${i}`, first: T0, last: T0 + rand(50) * 1000 })), rv: i });
    let rows = Array.from({ length: 300 }, (_, i) => mk(i)).sort(newerFirst);
    let next = 300;
    for (let round = 0; round < 200; round++) {
      const removed = [...new Set(Array.from({ length: rand(5) }, () => rows[rand(rows.length)]!))];
      const added = Array.from({ length: rand(6) }, () => mk(next++)).sort(newerFirst);
      const want = [...rows.filter((r) => !removed.includes(r)), ...added].sort(newerFirst);
      rows = spliceSorted(rows, removed, added);
      assert.deepEqual(rows.map((r) => r.rv), want.map((r) => r.rv), `round ${round}`);
    }
  });
});

describe('index.html', () => {
  it('preloads the first list page under the URL the event cache asks for first', () => {
    const html = readFileSync(new URL('../src/ui/app/index.html', import.meta.url), 'utf8');
    const m = /<link rel="preload" href="([^"]+)" as="fetch" crossorigin="anonymous"/.exec(html);
    assert.ok(m, 'index.html has no fetch preload');
    assert.equal(m[1], FIRST_PAGE_URL);
  });
});

describe('EventCache status', () => {
  it('says it is still listing until the last page is read, also when the server leaves remainingItemCount out', async () => {
    const { EventCache } = await import('../src/ui/app/event-cache.js');
    const item = (i: number): unknown => ({
      metadata: { name: `e${i}`, namespace: 'ns', uid: `u${i}`, resourceVersion: String(i) },
      involvedObject: { kind: 'Pod', namespace: 'ns', name: 'p' },
      reason: 'R', message: 'm', type: 'Normal', count: 1, lastTimestamp: '2025-01-01T00:00:00Z',
    });
    let releaseSecond: () => void = () => {};
    const secondAsked = new Promise<void>((r) => (releaseSecond = r));
    let answerSecond: (() => void) | undefined;
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((url: string) => {
      const json = (body: unknown): Response => new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
      if (url.includes('watch=')) return new Promise<Response>(() => {});
      if (!url.includes('continue=')) return Promise.resolve(json({ items: [item(1)], metadata: { resourceVersion: '10', continue: 'next' } }));
      return new Promise<Response>((resolve) => {
        answerSecond = () => resolve(json({ items: [item(2)], metadata: { resourceVersion: '10' } }));
        releaseSecond();
      });
    }) as typeof fetch;
    const cache = new EventCache();
    try {
      cache.start();
      await secondAsked;
      assert.equal(cache.status.listing, true);
      assert.equal(cache.status.expected, undefined);
      assert.equal(cache.status.loaded, 1);
      const done = new Promise<void>((r) => cache.subscribe(() => !cache.status.listing && r()));
      answerSecond!();
      await done;
      assert.equal(cache.status.loaded, 2);
    } finally {
      cache.stop();
      globalThis.fetch = realFetch;
    }
  });
});

describe('EventCache clusters', () => {
  it('lists the clusters its events were archived from, and follows them as events come and go', async () => {
    const { EventCache } = await import('../src/ui/app/event-cache.js');
    const item = (i: number, cluster?: string, rv = i): CoreEvent => {
      const e = ev({ name: `e${i}`, cluster, first: T0, last: T0 });
      return { ...e, metadata: { ...e.metadata, resourceVersion: String(rv) } };
    };
    let push: (frame: unknown) => void = () => {};
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((url: string) => {
      if (url.includes('watch=')) {
        const body = new ReadableStream<Uint8Array>({ start: (c) => (push = (frame) => c.enqueue(new TextEncoder().encode(`${JSON.stringify(frame)}\n`))) });
        return Promise.resolve(new Response(body, { status: 200 }));
      }
      const items = [item(1, 'prod'), item(2, 'staging'), item(3, 'prod'), item(4)];
      return Promise.resolve(new Response(JSON.stringify({ items, metadata: { resourceVersion: '10' } }), { status: 200 }));
    }) as typeof fetch;
    const cache = new EventCache();
    const next = (check: () => boolean): Promise<void> =>
      new Promise<void>((r) => {
        if (check()) r();
        const off = cache.subscribe(() => check() && (off(), r()));
      });
    try {
      cache.start();
      await next(() => cache.rows.length === 4 && cache.status.phase === 'live');
      assert.deepEqual(cache.clusters, ['prod', 'staging'], 'a local write names no cluster');
      push({ type: 'ADDED', object: item(11, 'dev') });
      await next(() => cache.rows.length === 5);
      assert.deepEqual(cache.clusters, ['dev', 'prod', 'staging']);
      push({ type: 'DELETED', object: item(2, 'staging', 12) });
      push({ type: 'DELETED', object: item(3, 'prod', 13) });
      await next(() => cache.rows.length === 3);
      assert.deepEqual(cache.clusters, ['dev', 'prod'], 'the last event of a cluster takes it away; one of two leaves it');
    } finally {
      cache.stop();
      globalThis.fetch = realFetch;
    }
  });
});

describe('marksFromTimeline', () => {
  it('draws the rows src/timeline builds, one mark each, estimated ones with their bounds, filterable like events', () => {
    const e = ev({ name: 'counted', object: 'web-1', reason: 'BackOff', type: 'Warning', count: 14, first: T0, last: T0 + 38 * 60_000 });
    const node = ev({ name: 'pressure', kind: 'Node', object: 'node-1', reason: 'NodeHasDiskPressure', first: T0 + 60_000, last: T0 + 60_000 });
    const t = buildTimeline({ events: [e, node] });
    const marks = marksFromTimeline(t.rows);
    assert.equal(marks.length, t.rows.length);
    assert.equal(marks.filter((m) => m.reason === 'BackOff').reduce((n, m) => n + m.n, 0), 14);
    assert.deepEqual([marks[0]!.t, marks[0]!.estimated, marks[0]!.objectKey], [T0, false, 'Pod/default/web-1']);
    const spread = marks.filter((m) => m.estimated);
    assert.equal(spread.length, 12);
    assert.ok(spread.every((m) => m.earliest === T0 && m.latest === T0 + 38 * 60_000 && m.t > T0 && m.t < T0 + 38 * 60_000));
    assert.deepEqual(marks.filter(rowMatcher({ ...EMPTY_FILTERS, kind: 'node' })).map((m) => m.objectKey), ['Node/default/node-1']);
    assert.deepEqual(lanesOf(marks).map((l) => [l.objectKey, l.total]), [['Pod/default/web-1', 14], ['Node/default/node-1', 1]]);
  });
});
