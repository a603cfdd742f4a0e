import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import { MemoryEventStore } from '../memory/index.js';
import { parseSearchQuery } from '../search/index.js';
import type { SearchPage, SearchRequest } from '../search/index.js';
import { PostgresEventStore } from './index.js';
import { compileQuery, searchColumns } from './search.js';
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
];

/** request asks for a whole result (and its histogram) in one page. */
function request(q: string, now: number): SearchRequest {
  return { query: parseSearchQuery(q, { nowMs: now }), limit: 100, histogram: { sinceMs: now - 10_000, untilMs: now, bucketMs: 2_000 } };
}

function summary(page: SearchPage): unknown {
  return { hits: page.items.map((h) => `${h.event.metadata.name}:${h.matched.join(',')}`), histogram: page.histogram?.map((b) => b.hits) };
}

void describe('PostgreSQL search index', () => {
  const clock = new FakeClock();
  const schema = fresh();
  let store: PostgresEventStore;
  const memory = new MemoryEventStore({ clock });
  before(async () => {
    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    for (const e of edges(clock.now())) {
      await store.create(e);
      await memory.create(e);
    }
  });
  after(async () => {
    await store.close();
    await drop(schema);
  });

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
  });

  for (const q of QUERIES) {
    void it(`answers as the scan does: ${q.length > 40 ? `${q.slice(0, 40)}…` : q}`, async () => {
      const now = clock.now();
      assert.deepEqual(summary(await store.search(request(q, now))), summary(await memory.search(request(q, now))));
    });
  }

  void it('reads candidates through the word index for a rare word', async () => {
    const text = `SELECT rv FROM ${schema}.versions WHERE op <> 3 AND search @@ $1::tsquery ORDER BY last_ms DESC, key LIMIT 10`;
    const client = await admin.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, ["'needle'"]);
      assert.match(rows.map((r) => r['QUERY PLAN']).join('\n'), /search_words|search_time/);
    } finally {
      client.release();
    }
  });
});
