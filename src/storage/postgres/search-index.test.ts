import { parseSearchQuery } from '../../api/index.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import { isStorageError } from '../errors.js';
import { MemoryEventStore } from '../memory/index.js';
import type { SearchCursor, SearchPage, SearchRequest } from '../search/index.js';
import { PostgresEventStore } from './index.js';
import { NEWEST_FIRST, PostgresSearch, REASON_KEY, compileQuery, newestFirst } from './search-index.js';
import { searchColumns } from './search-index-writer.js';
import type { PgPool } from './options.js';
import { POSTGRES_URL, testSchemas } from '../../../test/support/postgres.js';

const { admin, fresh, drop } = testSchemas('kevents_search');

/** EDGES are events whose text the vector cannot hold word by word, or whose keyword values need quoting or cutting. */
function edges(now: number): CoreEvent[] {
  const at = (i: number): string => new Date(now - i * 1000).toISOString();
  const event = (name: string, i: number, over: Partial<CoreEvent>): CoreEvent => ({
    metadata: { namespace: 'edge', name },
    involvedObject: { kind: 'Pod', namespace: 'edge', name: `pod-${name}` },
    reason: 'Edge',
    type: 'Normal',
    message: '',
    count: 1,
    lastTimestamp: at(i),
    ...over,
  });
  const many = Array.from({ length: 17_000 }, (_, i) => `w${i}`).join(' ');
  return [
    event('long', 1, { message: `${many} needle in a haystack` }),
    event('repeat', 2, { message: `${'echo '.repeat(300)}needle haystack` }),
    event('longword', 3, { message: `token ${'x'.repeat(300)} needle` }),
    event('quote', 4, { reason: "O'Brien\\Back", message: 'a quote in the reason' }),
    event('longname', 5, { involvedObject: { kind: 'Pod', namespace: 'edge', name: `n${'y'.repeat(250)}` }, message: 'long name' }),
    event('phrase', 7, { message: 'haystack', reason: 'NeedleFound' }),
    event('plain', 8, { message: 'needle haystack' }),
    // A reason JavaScript lowercases to ASCII from a character that is not (the Kelvin sign), and its ASCII twin.
    event('kelvin', 9, { reason: '\u212aill', message: 'needle kelvin' }),
    event('kill', 10, { reason: 'Kill', message: 'needle' }),
  ];
}

const QUERIES = [
  'needle',
  '"needle haystack"',
  '"haystack needle"',
  'needle -haystack',
  '-needle',
  '-"needle haystack"',
  'w16999',
  'w100 needle',
  'echo',
  '"echo needle"',
  `${'x'.repeat(300)}`,
  `-${'x'.repeat(300)}`,
  "reason:\"o'brien\\\\back\"",
  "reason:o'b*",
  "-reason:\"o'brien\\\\back\"",
  `name:n${'y'.repeat(250)}`,
  `name:n${'y'.repeat(220)}*`,
  `-name:n${'y'.repeat(250)}`,
  `-name:n${'y'.repeat(199)}`,
  'haystack needlefound',
  '"haystack needlefound"',
  'type:normal -reason:edge',
  'reason:kill',
  'reason:KILL needle',
  'reason:edge needle',
  'reason:needlefound haystack',
  'reason:edge reason:kill',
];

/** request asks for a whole result (and its histogram) in one page. */
function request(q: string, now: number): SearchRequest {
  return { query: parseSearchQuery(q, { nowMs: now }), limit: 100, histogram: { sinceMs: now - 10_000, untilMs: now, bucketMs: 2_000 } };
}

function summary(page: SearchPage): unknown {
  return { hits: page.items.map((h) => `${h.event.metadata.name}:${h.matched.join(',')}`), histogram: page.histogram?.map((b) => b.hits) };
}

/**
 * archives writes the same events into a PostgreSQL store on a fresh schema and
 * into a memory store, before the enclosing suite's cases (`parallel` creates
 * at a time in PostgreSQL), and drops the schema after them.
 */
function archives(events: (now: number) => CoreEvent[], parallel = 1): { clock: FakeClock; schema: string; store: () => PostgresEventStore; memory: MemoryEventStore } {
  const clock = new FakeClock();
  const schema = fresh();
  let store: PostgresEventStore | undefined;
  const memory = new MemoryEventStore({ clock });
  before(async () => {
    const s = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    store = s;
    const all = events(clock.now());
    for (let i = 0; i < all.length; i += parallel) await Promise.all(all.slice(i, i + parallel).map((e) => s.create(e)));
    for (const e of all) await memory.create(e);
  });
  after(async () => {
    await store?.close();
    await drop(schema);
  });
  return { clock, schema, store: () => store!, memory };
}

void describe('PostgreSQL search index', () => {
  const { clock, store, memory } = archives(edges);

  void it('holds no words of a text too large to index exactly, and marks it', () => {
    const [long, repeat, longword, , , , plain] = edges(clock.now()).map(searchColumns);
    for (const c of [long, repeat, longword]) assert.match(c!.search, /^'~' /);
    assert.match(plain!.search, /^'needle':1 'haystack':2 /);
  });

  void it('compiles the terms it cannot answer exactly as no narrowing, and says so', () => {
    const compile = (q: string): ReturnType<typeof compileQuery> => compileQuery(parseSearchQuery(q, { nowMs: 0 }));
    assert.deepEqual(compile('"a b" -c'), { tsquery: "('a' <-> 'b' | '~') & (!('c') | '~')", exact: true });
    assert.deepEqual(compile('name:web-* -reason:x'), { tsquery: "'name=web-':* & !'reason=x'", exact: true });
    assert.deepEqual(compile(`-name:${'y'.repeat(300)}`), { tsquery: undefined, exact: false });
    // A whole reason of printable ASCII is compared with the row's reason, not the vector.
    assert.deepEqual(compile('reason:FailedMount secret'), { tsquery: "('secret' | '~')", exact: true, reason: 'failedmount' });
    assert.deepEqual(compile('reason:Failed*'), { tsquery: "'reason=failed':*", exact: true });
  });

  for (const q of QUERIES) {
    void it(`answers as the scan does: ${q.length > 40 ? `${q.slice(0, 40)}…` : q}`, async () => {
      const now = clock.now();
      assert.deepEqual(summary(await store().search(request(q, now))), summary(await memory.search(request(q, now))));
    });
  }
});

/**
 * plans gives a schema of 40,000 versions written by SQL (one of 2,000 holds the word `needle`, one of five each reason,
 * twenty to a second, so times tie), analyzed: on the handful of rows of a test archive any plan is as cheap, and the
 * planner picks any index.
 */
function plans(): { explain: (text: string, values: unknown[]) => Promise<string> } {
  const schema = fresh();
  before(async () => {
    const s = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock: new FakeClock() });
    await s.ready();
    await s.close();
    await admin.query(
      `INSERT INTO ${schema}.versions (rv, key, op, object, name, involved_kind, involved_namespace, involved_name, involved_uid, reason, type, search, last_ms)
       SELECT i, 'ns-' || (i % 7) || '/e-' || i, 1, '{}', 'e-' || i, 'Pod', 'ns-' || (i % 7), 'p-' || i, '', (ARRAY['BackOff', 'Pulled', 'Killing', 'Created', 'Started'])[1 + i % 5], 'Normal',
         (CASE WHEN i % 2000 = 0 THEN 'needle hay' ELSE 'hay' END)::tsvector, 1700000000000 + (i / 20) * 1000
       FROM generate_series(1, 40000) AS i;
       UPDATE ${schema}.meta SET value = 40000 WHERE name = 'revision';
       ANALYZE ${schema}.versions`,
    );
  });
  after(() => drop(schema));
  const at = "op <> 3 AND rv <= 40000 AND (superseded_rv IS NULL OR superseded_rv > 40000)";
  return {
    explain: async (where, values) => {
      const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT rv FROM ${schema}.versions WHERE ${at} AND ${where} ORDER BY last_ms DESC, key LIMIT 101`, values);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    },
  };
}

void describe('the search\'s plans', () => {
  const { explain } = plans();
  // The rows of one millisecond are put in key order as they come: no sort of every row of the reason.
  const incremental = /Incremental Sort[^\n]*\n\s*Sort Key: last_ms DESC, key[^\n]*\n\s*Presorted Key: last_ms\n/;

  void it('reads the newest versions through the time index, backward, in the search\'s order', async () => {
    const plan = await explain('true', []);
    assert.match(plan, /Index Scan Backward using search_time/, plan);
    assert.doesNotMatch(plan, /Sort/, plan);
  });

  void it('tests one namespace\'s key range on the time index\'s entries', async () => {
    const plan = await explain('key >= $1 AND key < $2', ['ns-3/', 'ns-30']);
    assert.match(plan, /Index Scan Backward using search_time on versions[^\n]*\n\s*Index Cond: \(\(key >= /, plan);
  });

  void it('reads a common reason newest first through the reason\'s index', async () => {
    const plan = await explain(`${REASON_KEY} = $1`, ['backoff']);
    assert.match(plan, /Index Scan Backward using search_reason/, plan);
    assert.match(plan, incremental, plan);
  });

  void it('reads candidates through the word index for a rare word', async () => {
    const plan = await explain('search @@ $1::tsquery', ["'needle'"]);
    assert.match(plan, /Bitmap Index Scan on search_words/, plan);
  });
});

void describe('a phrase of common words, and several common terms, read newest first', () => {
  const stats = { shares: new Map([['back', 0.05], ['off', 0.05], ['container', 0.4], ['has', 0.0001], ['reason=backoff', 0.05], ['probe', 0.01]]), rows: 1_000_000 };
  // The scans' 7,168 rows hold a page of 100 and one more when 1.4% of the rows are hits.
  const cases: [string, boolean, number?][] = [
    ['"back off container"', true],
    ['back-off', true],
    ['"back off" reason:BackOff', true],
    ['"back off" container -x509', true],
    ['"back off" x509', false],
    ['"back has"', false],
    ['"back off" name:web-*', false],
    ['-"back off"', false],
    ['back container', true],
    ['reason:BackOff container -x509', true],
    ['back container', false, 1_000],
    ['container', false],
    ['container -back', false],
    ['back has', false],
    ['container probe', false],
    ['container name:web-*', false],
  ];
  for (const [q, want, limit = 100] of cases) {
    void it(`${want ? 'reads' : 'does not read'} ${q} newest first${limit !== 100 ? ` (a page of ${limit})` : ''}`, () =>
      assert.equal(newestFirst(parseSearchQuery(q, { nowMs: 0 }), stats, { commonRows: 2_000, scans: NEWEST_FIRST.scans }, limit), want));
  }

  // Every event holds the phrase's words; one in 25 holds the phrase. Two events share each second.
  const phrases = (now: number): CoreEvent[] =>
    Array.from({ length: 1_200 }, (_, i): CoreEvent => {
      const at = new Date(now - Math.floor(i / 2) * 1000).toISOString();
      const message = i % 25 === 7 ? `Back-off restarting failed container app-${i}` : `container failed, back off before restarting app-${i}`;
      return { metadata: { namespace: `ns-${i % 3}`, name: `e${i}` }, involvedObject: { kind: 'Pod', namespace: `ns-${i % 3}`, name: `pod-${i}` }, reason: 'BackOff', type: 'Warning', message, count: 1, lastTimestamp: at };
    });
  const { clock, schema, memory } = archives(phrases, 100);

  void it('finds what the scan finds, page by page, through short scans newest first and the word index after them', async () => {
    await admin.query(`ANALYZE ${schema}.versions`);
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT unnest(most_common_elems::text::text[]) AS e FROM pg_stats WHERE schemaname = $1 AND tablename = 'versions' AND attname = 'search') t WHERE e IN ('back', 'off', 'restarting', 'failed', 'container')`,
      [schema],
    );
    assert.equal(rows[0]!.n, 5, 'the statistics hold every word as common: the scans go first');
    const search = new PostgresSearch(schema, () => Promise.resolve(), { commonRows: 100, scans: [64, 128], statsMs: 0 });
    const pool = admin as unknown as PgPool;
    const paged = async (read: (r: SearchRequest) => Promise<SearchPage>, q: string, limit: number, namespace?: string): Promise<string[]> => {
      const names: string[] = [];
      let after: SearchCursor | undefined;
      for (;;) {
        const page = await read({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit, ...(after !== undefined ? { after } : {}), ...(namespace !== undefined ? { namespace } : {}) });
        names.push(...page.items.map((h) => h.event.metadata.name!));
        if (page.next === undefined) return names;
        after = page.next;
      }
    };
    for (const [q, limit, namespace] of [
      ['"back-off restarting failed container"', 7],
      ['"back-off restarting failed container"', 1],
      ['back-off restarting', 100],
      ['"failed container" -app-432', 10, 'ns-1'],
      ['back-off container reason:BackOff', 7],
      ['restarting failed -app-432', 50, 'ns-2'],
    ] as const) {
      const want = await paged((r) => memory.search(r), q, limit, namespace);
      assert.ok(want.length > 0, q);
      assert.deepEqual(await paged((r) => search.search(pool, r), q, limit, namespace), want, `${q} by ${limit}`);
    }
  });
});

void describe('a search statement past its statement_timeout', () => {
  const clock = new FakeClock();
  const schema = fresh();
  let store: PostgresEventStore | undefined;
  let pool: pg.Pool | undefined;
  before(async () => {
    // A pool of two: one connection listens for the change feed, so every other statement of the store, and the test's SHOW, share the second.
    pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    store = new PostgresEventStore({ pool, schema, clock, searchTimeoutMs: 200 });
    for (const e of edges(clock.now())) await store.create(e);
  });
  after(async () => {
    await store?.close();
    await pool?.end();
    await drop(schema);
  });

  void it('is cancelled, and the search fails with Timeout, leaving the connection as it was', { timeout: 30_000 }, async () => {
    const now = clock.now();
    assert.equal((await store!.search(request('needle', now))).items.length > 0, true);
    // A lock held by another transaction stops every read of the versions: without the timeout the search would wait for ever.
    const locker = await admin.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${schema}.versions IN ACCESS EXCLUSIVE MODE`);
      const failure = await store!.search(request('needle', now)).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(isStorageError(failure, 'Timeout'), String(failure));
      assert.match(failure.message, /the search took longer than its limit of 200 ms per statement and was cancelled: narrow the query or its window/);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    const { rows } = await pool!.query<{ statement_timeout: string }>('SHOW statement_timeout');
    assert.equal(rows[0]!.statement_timeout, (await admin.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]!.statement_timeout);
    assert.equal((await store!.search(request('needle', now))).items.length > 0, true);
  });

  void it('bounds the reads of a search page\'s hits\' occurrences too: they fail with Timeout', { timeout: 30_000 }, async () => {
    const events = [{ namespace: 'default', name: 'a', regardingName: 'pod-a' }];
    assert.deepEqual(await store!.listEventOccurrences({ events }), [[]]);
    const locker = await admin.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${schema}.occurrences IN ACCESS EXCLUSIVE MODE`);
      const failure = await store!.listEventOccurrences({ events }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(isStorageError(failure, 'Timeout'), String(failure));
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    assert.deepEqual(await store!.listEventOccurrences({ events }), [[]]);
  });
});
