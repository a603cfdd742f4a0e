import { SEARCH_TEXT_FIELDS, parseSearchQuery, searchFieldValue, searchWords } from '../../api/index.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import type { SearchCursor, SearchRequest } from '../search/index.js';
import { encodeObject } from '../shared/object-codec.js';
import { applySchema, nameHash } from './schema.js';
import { internedValues } from './interned.js';
import { DOCID_SLOTS, KEYED_FIELDS, SqliteSearch, VALUE_TOKENS_META, indexHoldsValueTokens, matchExpression, valueToken } from './search-index.js';
import type { SearchTokenizer } from './search-index.js';
import { SHARED_TEXT_MIN, buildSearchIndex, createSearchIndexWriter, rebuildSearchText, searchIndexSchema } from './search-index-writer.js';
import type { SearchIndexWriter } from './search-index-writer.js';

const NOW = Date.UTC(2025, 5, 1, 12);

function ev(name: string, message: string, lastMs: number, extra: Partial<CoreEvent> = {}): CoreEvent {
  const t = new Date(lastMs).toISOString();
  return {
    metadata: { namespace: extra.metadata?.namespace ?? 'shop', name },
    involvedObject: { kind: 'Pod', namespace: 'shop', name: `pod-${name}` },
    reason: 'BackOff',
    type: 'Warning',
    message,
    firstTimestamp: t,
    lastTimestamp: t,
    ...extra,
  };
}

/** Archive is a raw database with the store's schema and the index, written as the store writes versions. */
class Archive {
  readonly db = new Database(':memory:');
  rv = 0;
  writer: SearchIndexWriter | undefined;
  private readonly current = new Map<string, { rv: number; json: string }>();

  constructor(
    readonly tokenizer: SearchTokenizer,
    indexed = true,
  ) {
    applySchema(this.db);
    if (indexed) this.index();
  }

  index(): void {
    this.db.exec(searchIndexSchema(this.tokenizer));
    this.writer = createSearchIndexWriter(this.db);
  }

  /** id is a value as a row holds it (`interned.ts`). */
  private id(value: string | null | undefined): number {
    return internedValues(this.db).id(value ?? '');
  }

  /** put writes a new version of an event (superseding the current one) and, unless `queue`, commits it with its index entry. */
  put(e: CoreEvent, queue = false): number {
    const key = `${e.metadata.namespace}/${e.metadata.name}`;
    const rv = ++this.rv;
    const prev = this.current.get(key);
    if (prev !== undefined) this.db.prepare('UPDATE versions SET superseded_rv = ? WHERE rv = ?').run(rv, prev.rv);
    const json = JSON.stringify(e);
    this.db
      .prepare('INSERT INTO versions (rv, key, op, object, prev_rv, involved_kind, involved_hash, reason, type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(rv, key, prev === undefined ? 1 : 2, encodeObject(json), prev?.rv ?? null, this.id(e.involvedObject.kind), nameHash(e.involvedObject.name ?? ''), this.id(e.reason), this.id(e.type));
    this.writer?.add(rv, e, json.length, prev);
    if (!queue) this.writer?.write();
    this.current.set(key, { rv, json });
    return rv;
  }

  /** drop removes a version row with its entry, as compaction and retention do. */
  drop(rv: number): void {
    this.writer?.drop(rv);
    this.db.prepare('DELETE FROM versions WHERE rv = ?').run(rv);
  }

  search(q: string, extra: Partial<SearchRequest> = {}, at = this.rv): string[] {
    const page = new SqliteSearch(this.db, this.tokenizer).search({ query: parseSearchQuery(q, { nowMs: NOW }), limit: 100, ...extra }, at);
    return page.items.map((h) => h.event.metadata.name!);
  }

  indexedRows(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM search_docs').get() as { n: number }).n;
  }
}

void describe('matchExpression', () => {
  const cases: [string, SearchTokenizer, string | undefined][] = [
    ['', 'unicode61', undefined],
    ['certs', 'unicode61', '"certs"'],
    ['"secret not found" x509', 'unicode61', '"secret not found" AND "x509"'],
    ['certs -tls -"back off"', 'unicode61', '(("certs") NOT "tls") NOT "back off"'],
    ['-tls', 'unicode61', undefined],
    ['name:checkout-db-* reason:BackOff', 'unicode61', 'name : "checkout db" AND reason : "backoff"'],
    ['name:checkout-d* reason:Back*', 'unicode61', 'name : "checkout d" * AND reason : "back" *'],
    ['type:warning cluster:prod -name:web', 'unicode61', undefined],
    ['ns:team-1* probe', 'unicode61', '"probe"'],
    ['ns:ops certs reason:Failed* kind:p*', 'unicode61', '"certs" AND reason : "failed" *'],
    ['ns:ops', 'unicode61', undefined],
    ['certs -tls', 'trigram', '"certs"'],
    ['db certs', 'trigram', '"certs"'],
    ['db', 'trigram', undefined],
    ['name:checkout-db-*', 'trigram', 'name : "checkout db"'],
  ];
  for (const [q, tokenizer, want] of cases) {
    void it(`${tokenizer}: ${JSON.stringify(q)}`, () => assert.equal(matchExpression(parseSearchQuery(q, { nowMs: NOW }), tokenizer), want));
  }
  void it('narrows by the namespace of the request', () => {
    assert.equal(matchExpression(parseSearchQuery('certs', { nowMs: NOW }), 'unicode61', 'kube-system'), '"certs" AND ns : "kube system"');
  });

  // With value tokens: a keyed field compared whole reads its value's one token; a wildcard, a one-word value, another field, as before.
  const keyed: [string, string | undefined][] = [
    ['node:ip-10-0-3-17.ec2.internal', 'node : "\u{e000}ip100317ec2internal"'],
    ['controller:Default-Scheduler certs', 'controller : "\u{e000}defaultscheduler" AND "certs"'],
    ['ns:team-7', 'ns : "\u{e000}team7"'],
    ['ns:ops', undefined],
    ['ns:team-1* probe', '"probe"'],
    ['node:ip-10-* probe', 'node : "ip 10" AND "probe"'],
    ['controller:kubelet', 'controller : "kubelet"'],
    ['name:checkout-db-0 -node:ip-10-0-3-17.ec2.internal', 'name : "checkout db 0"'],
  ];
  for (const tokenizer of ['unicode61', 'trigram'] as const) {
    for (const [q, want] of keyed) {
      void it(`${tokenizer}, value tokens: ${JSON.stringify(q)}`, () => assert.equal(matchExpression(parseSearchQuery(q, { nowMs: NOW }), tokenizer, undefined, true), want));
    }
  }
  void it('narrows by the value token of the request\'s namespace', () => {
    assert.equal(matchExpression(parseSearchQuery('certs', { nowMs: NOW }), 'unicode61', 'kube-system', true), '"certs" AND ns : "\u{e000}kubesystem"');
    assert.equal(matchExpression(parseSearchQuery('certs', { nowMs: NOW }), 'unicode61', 'ops', true), '"certs" AND ns : "ops"');
  });
});

void describe('valueToken', () => {
  void it('stands for a value of several words, and leaves a one-word value to its word', () => {
    assert.equal(valueToken(['ip', '10', '0']), '\u{e000}ip100');
    assert.equal(valueToken(['kubelet']), undefined);
    assert.equal(valueToken([]), undefined);
  });
});

for (const tokenizer of ['unicode61', 'trigram'] as const) {
  void describe(`SqliteSearch (${tokenizer})`, () => {
    void it('finds by words, newest first, ordered exactly within one second', () => {
      const a = new Archive(tokenizer);
      const second = NOW - 60_000;
      a.put(ev('late-in-second', 'volume certs missing', second + 900));
      // Written together (one transaction's entries), and after an entry of the same second.
      a.put(ev('b-early', 'volume certs missing', second + 100), true);
      a.put(ev('a-early', 'volume certs missing', second + 100), true);
      a.put(ev('older', 'volume certs missing', second - 5000), true);
      a.put(ev('other', 'nothing to see', second));
      assert.deepEqual(a.search('certs'), ['late-in-second', 'a-early', 'b-early', 'older']);
      assert.deepEqual(a.search('cert'), [], 'whole words only, whatever the tokenizer');
    });

    void it('places a version past every docid, or in a second that has some, or before them, each in its own slot', () => {
      const a = new Archive(tokenizer);
      const second = NOW - 60_000;
      a.put(ev('mid', 'same words', second + 500));
      // One transaction: a newer second than any (twice), the second of an earlier one, an older second, a second newer still.
      a.put(ev('new-a', 'same words', second + 10_000), true);
      a.put(ev('new-b', 'same words', second + 10_900), true);
      a.put(ev('mid-early', 'same words', second + 100), true);
      a.put(ev('old', 'same words', second - 10_000), true);
      a.put(ev('newest', 'same words', second + 20_000));
      a.put(ev('mid-late', 'same words', second + 999));
      const docids = a.db.prepare<[], { docid: number }>('SELECT docid FROM search_docs ORDER BY rv').all().map((r) => r.docid);
      const slot = (ms: number, n: number): number => Math.floor(ms / 1000) * DOCID_SLOTS + n;
      assert.deepEqual(docids, [slot(second, 0), slot(second + 10_000, 0), slot(second + 10_000, 1), slot(second, 1), slot(second - 10_000, 0), slot(second + 20_000, 0), slot(second, 2)]);
      assert.deepEqual(a.search('same'), ['newest', 'new-b', 'new-a', 'mid-late', 'mid', 'mid-early', 'old']);
    });

    void it('pages through a tie of one second without loss or repeat', () => {
      const a = new Archive(tokenizer);
      for (let i = 0; i < 40; i++) a.put(ev(`e${String(i).padStart(2, '0')}`, 'same words', NOW - (i % 3) * 1000 + (i % 7)));
      const all = a.search('same');
      const paged: string[] = [];
      let after;
      const search = new SqliteSearch(a.db, tokenizer);
      for (;;) {
        const page = search.search({ query: parseSearchQuery('same', { nowMs: NOW }), limit: 7, ...(after !== undefined ? { after } : {}) }, a.rv);
        paged.push(...page.items.map((h) => h.event.metadata.name!));
        if (page.next === undefined) break;
        after = page.next;
      }
      assert.equal(all.length, 40);
      assert.deepEqual(paged, all);
    });

    void it('reads the versions visible at a revision', () => {
      const a = new Archive(tokenizer);
      const first = a.put(ev('x', 'old words here', NOW - 10_000));
      a.put(ev('x', 'new text now', NOW - 5000));
      assert.deepEqual(a.search('old'), []);
      assert.deepEqual(a.search('new'), ['x']);
      assert.deepEqual(a.search('old', {}, first), ['x']);
      assert.deepEqual(a.search('new', {}, first), []);
    });

    void it('drops a version\'s entries with the version', () => {
      const a = new Archive(tokenizer);
      const rv = a.put(ev('x', 'fleeting words', NOW));
      a.put(ev('y', 'lasting words', NOW));
      assert.equal(a.indexedRows(), 2);
      a.drop(rv);
      assert.equal(a.indexedRows(), 1);
      assert.deepEqual(a.search('words'), ['y']);
      assert.deepEqual(a.search('fleeting'), []);
    });

    void it('indexes a repeat of a long text once, finds each version where it did, and drops the entry with its last sharer', async () => {
      const a = new Archive(tokenizer);
      const long = 'boom the container exited while pulling the image '.repeat(Math.ceil(SHARED_TEXT_MIN / 50));
      const at = (i: number): number => NOW - 3_600_000 + i * 60_000;
      const repeat = (i: number, count: number, queue = false): number => a.put(ev('x', long, at(i), { count }), queue);
      const rvs = [repeat(0, 1), repeat(2, 2), repeat(4, 3, true), repeat(6, 4)];
      // Short texts keep their own entries, repeated or not, and interleave with the repeats in the order.
      a.put(ev('y', 'boom short', at(3)));
      a.put(ev('y', 'boom short', at(5)));
      rvs.push(repeat(8, 5));
      const entries = (): number => (a.db.prepare('SELECT count(*) AS n FROM search_docs WHERE text IS NULL').get() as { n: number }).n;
      const sharers = (): number => (a.db.prepare('SELECT count(*) AS n FROM search_docs WHERE text IS NOT NULL').get() as { n: number }).n;
      assert.equal(entries(), 3, 'one entry of the long text, two of the short one');
      assert.equal(sharers(), 4);
      assert.deepEqual(a.search('boom'), ['x', 'y']);
      assert.deepEqual(a.search('pulling image'), ['x']);
      assert.deepEqual(a.search('"image boom"'), ['x']);
      assert.deepEqual(a.search('boom -container'), ['y']);
      for (const rv of rvs) {
        const page = new SqliteSearch(a.db, tokenizer).search({ query: parseSearchQuery('pulling', { nowMs: NOW }), limit: 10 }, rv);
        assert.deepEqual(page.items.map((h) => h.event.count), [rvs.indexOf(rv) + 1], `the version at ${rv}`);
      }
      // Paged one at a time, and by a window, at a revision where x's older versions and y's interleave.
      const mid = rvs[3]! + 1;
      const paged: number[] = [];
      let after: SearchCursor | undefined;
      const search = new SqliteSearch(a.db, tokenizer);
      for (;;) {
        const page = search.search({ query: parseSearchQuery('boom', { nowMs: NOW }), limit: 1, ...(after !== undefined ? { after } : {}) }, mid);
        paged.push(...page.items.map((h) => Date.parse(h.event.lastTimestamp!)));
        if (page.next === undefined) break;
        after = page.next;
      }
      assert.deepEqual(paged, [at(6), at(3)]);
      const since = new Date(at(5)).toISOString();
      assert.deepEqual(a.search(`boom since:${since}`, { limit: 1 }), ['x']);
      // A window below the head, near the oldest entry: read from its start (the window's own reads).
      const window = `pulling since:${new Date(at(0) + 1000).toISOString()} until:${new Date(at(6) + 30_000).toISOString()}`;
      assert.deepEqual(search.search({ query: parseSearchQuery(window, { nowMs: NOW }), limit: 1 }, mid).items.map((h) => h.event.count), [4]);
      const histogram = await search.histogram(
        { query: parseSearchQuery('pulling', { nowMs: NOW }), limit: 1, histogram: { sinceMs: at(0), untilMs: at(10), bucketMs: 5 * 60_000 } },
        a.rv,
        () => Promise.resolve(),
      );
      assert.deepEqual(histogram.map((b) => b.hits), [0, 1]);
      // Another text gets its own entry; the old one stays while a version sharing it does.
      a.put(ev('x', `${long} changed`, at(9), { count: 6 }));
      assert.equal(entries(), 4);
      for (const rv of rvs.slice(0, 2)) a.drop(rv);
      assert.equal(entries(), 4, 'the entry stays for the versions that share it');
      assert.deepEqual(a.search('pulling', {}, rvs[2]), ['x']);
      for (const rv of rvs.slice(2)) a.drop(rv);
      assert.equal(entries(), 3);
      assert.equal(sharers(), 0);
      const fts = (a.db.prepare('SELECT count(*) AS n FROM search_fts').get() as { n: number }).n;
      assert.equal(fts, 3, 'the shared entry went with its last sharer');
      assert.deepEqual(a.search('changed'), ['x']);
    });

    void it('writes nothing of a version dropped before its transaction commits, nor of a transaction rolled back', () => {
      const a = new Archive(tokenizer);
      const rv = a.put(ev('x', 'fleeting words', NOW), true);
      a.put(ev('y', 'lasting words', NOW), true);
      a.drop(rv);
      a.writer!.write();
      assert.equal(a.indexedRows(), 1);
      assert.deepEqual(a.search('words'), ['y']);
      a.db.exec('BEGIN');
      a.put(ev('z', 'rolled back', NOW), true);
      a.db.exec('ROLLBACK');
      a.rv--;
      a.writer!.discard();
      a.writer!.write();
      assert.equal(a.indexedRows(), 1);
    });

    void it('reads a queue lost to a rollback back from the file: the versions above the mark, once each', () => {
      const a = new Archive(tokenizer);
      a.put(ev('x', 'kept words', NOW));
      a.put(ev('y', 'kept words', NOW + 1000), true);
      a.db.exec('BEGIN');
      a.put(ev('z', 'kept words', NOW + 2000), true);
      a.db.exec('ROLLBACK');
      a.rv--;
      a.writer!.discard();
      assert.equal(a.writer!.waiting.lost, true);
      assert.deepEqual(a.search('kept'), ['y', 'x'], 'the version above the mark is found by the scan');
      a.put(ev('w', 'kept words', NOW + 3000), true);
      assert.equal(a.writer!.write(a.rv), false);
      assert.equal(a.indexedRows(), 3);
      assert.equal(a.writer!.indexedRv, a.rv);
      assert.equal(a.writer!.waiting.lost, false);
      assert.deepEqual(a.search('kept'), ['w', 'y', 'x']);
    });

    void it('finds the versions above the high-water mark, in order with the indexed ones, across pages and in the histogram', async () => {
      const a = new Archive(tokenizer);
      const second = Math.floor(NOW / 1000) * 1000;
      a.put(ev('i-new', 'fresh words', second + 5000));
      a.put(ev('i-old', 'fresh words', second - 5000));
      a.put(ev('i-mid', 'other words', second));
      a.put(ev('u-newest', 'fresh words', second + 9000), true);
      a.put(ev('u-mid', 'fresh words', second + 1), true);
      a.put(ev('u-oldest', 'fresh words', second - 9000), true);
      // i-mid updated above the mark: its indexed version is superseded, its new one is found by the scan.
      a.put(ev('i-mid', 'fresh words now', second + 2), true);
      assert.equal(a.writer!.indexedRv, 3);
      const all = ['u-newest', 'i-new', 'i-mid', 'u-mid', 'i-old', 'u-oldest'];
      assert.deepEqual(a.search('fresh'), all);
      assert.deepEqual(a.search('fresh', { namespace: 'shop' }), all);
      assert.deepEqual(a.search('fresh', { namespace: 'other' }), []);
      assert.deepEqual(a.search('fresh', {}, 3), ['i-new', 'i-old'], 'a revision at the mark reads the index alone');
      assert.deepEqual(a.search('"fresh words now"'), ['i-mid']);
      assert.deepEqual(a.search('fresh -now since:2025-06-01T11:59:58Z'), ['u-newest', 'i-new', 'u-mid']);
      const search = new SqliteSearch(a.db, tokenizer);
      for (const limit of [1, 2, 4]) {
        const names: string[] = [];
        let after: SearchCursor | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const page = search.search({ query: parseSearchQuery('fresh', { nowMs: NOW }), limit, ...(after !== undefined ? { after } : {}) }, a.rv);
          names.push(...page.items.map((h) => h.event.metadata.name!));
          if (page.next === undefined) break;
          after = page.next;
        }
        assert.deepEqual(names, all, `pages of ${limit}`);
      }
      const histogram = { sinceMs: second - 10_000, untilMs: second + 10_000, bucketMs: 5000 };
      const buckets = await search.histogram({ query: parseSearchQuery('fresh', { nowMs: NOW }), limit: 1, histogram }, a.rv, () => Promise.resolve());
      assert.deepEqual(buckets.map((b) => b.hits), [1, 1, 2, 2]);
      a.writer!.write(a.rv);
      assert.deepEqual(a.search('fresh'), all, 'the same once indexed');
    });

    void it('builds the index of an archive written before it, as the write path would', () => {
      const before = new Archive(tokenizer, false);
      const live = new Archive(tokenizer);
      const events = [ev('a', 'certs missing', NOW - 3000), ev('b', 'back-off restarting', NOW - 2000), ev('a', 'certs renewed', NOW - 1000), ev('c', 'pulled image', NOW)];
      for (const e of events) {
        before.put(e);
        live.put(e);
      }
      before.db.exec(searchIndexSchema(tokenizer));
      const progress: string[] = [];
      before.db.transaction(() => buildSearchIndex(before.db, (done, total) => progress.push(`${done}/${total}`), 3))();
      assert.deepEqual(progress, ['3/4', '4/4']);
      for (const q of ['certs', 'back-off', '', 'name:pod-a', 'renewed']) assert.deepEqual(before.search(q), live.search(q), q);
      assert.deepEqual(before.search('certs', {}, 1), ['a']);
    });

    void it('keeps to the namespace, the window and the fields', () => {
      const a = new Archive(tokenizer);
      a.put(ev('x', 'probe failed', NOW - 2 * 3_600_000));
      a.put(ev('y', 'probe failed', NOW - 1000, { metadata: { namespace: 'ops', name: 'y' }, reason: 'Unhealthy' }));
      a.put(ev('z', 'probe failed', NOW - 3_600_000));
      assert.deepEqual(a.search('probe', { namespace: 'ops' }), ['y']);
      assert.deepEqual(a.search('probe since:90m'), ['y', 'z']);
      assert.deepEqual(a.search('probe until:90m'), ['x']);
      assert.deepEqual(a.search('reason:unhealthy'), ['y']);
      assert.deepEqual(a.search('-reason:unhealthy'), ['z', 'x']);
    });

    void it('leaves a row out by its columns only where SQLite compares them as the query language does', () => {
      const a = new Archive(tokenizer);
      // KELVIN SIGN lowercases to k in JavaScript, not in SQLite's lower(): the check of the row decides.
      a.put(ev('kelvin', 'killed', NOW - 1000, { reason: '\u212Aill', type: 'Normal' }));
      a.put(ev('ascii', 'killed', NOW - 2000, { reason: 'KILL', type: 'Normal' }));
      a.put(ev('other', 'killed', NOW - 3000, { reason: 'Started' }));
      assert.deepEqual(a.search('reason:kill'), ['kelvin', 'ascii']);
      assert.deepEqual(a.search('killed -reason:kill'), ['other']);
      assert.deepEqual(a.search('killed type:normal -reason:ki*'), []);
      assert.deepEqual(a.search('killed -type:normal'), ['other']);
    });

    void it('ends a page short once it has examined maxExamined candidates, at a position past all of them', () => {
      const a = new Archive(tokenizer);
      // An excluded controller narrows neither the index nor the row's columns: every version is a candidate, and few of them are hits.
      for (let i = 0; i < 30; i++) a.put(ev(`e${String(i).padStart(2, '0')}`, 'words', NOW - i * 1000, i % 10 === 9 ? {} : { source: { component: 'kubelet' } }));
      const search = new SqliteSearch(a.db, tokenizer);
      const request = { query: parseSearchQuery('-controller:kubelet', { nowMs: NOW }), limit: 10 };
      assert.deepEqual(a.search('-controller:kubelet'), ['e09', 'e19', 'e29']);
      const first = search.search({ ...request, maxExamined: 5 }, a.rv);
      assert.deepEqual(first.items, [], 'the first five candidates hold no hit');
      assert.deepEqual(first.next, { timeMs: NOW - 4000, key: 'shop/e04' });
      const paged: string[] = [];
      let after: SearchCursor | undefined = first.next;
      for (let pages = 0; after !== undefined; pages++) {
        assert.ok(pages < 10);
        const page = search.search({ ...request, maxExamined: 5, after }, a.rv);
        paged.push(...page.items.map((h) => h.event.metadata.name!));
        after = page.next;
      }
      assert.deepEqual(paged, ['e09', 'e19', 'e29']);
    });

    void it('ends a bounded read short once it has decoded 2 MiB of events, and pages on to every hit', () => {
      const a = new Archive(tokenizer);
      // Twelve events of a MiB each: a read that decoded them all would hold the loop for as long as they take.
      const big = (i: number): string => `boom ${i} `.padEnd(1 << 20, 'the container exited while pulling the image ');
      for (let i = 0; i < 12; i++) a.put(ev(`big${String(i).padStart(2, '0')}`, big(i), NOW - i * 1000));
      const search = new SqliteSearch(a.db, tokenizer);
      const request = { query: parseSearchQuery('boom', { nowMs: NOW }), limit: 50 };
      const first = search.search({ ...request, maxExamined: 500 }, a.rv);
      assert.ok(first.items.length >= 2 && first.items.length < 12, `${first.items.length} hits in the first read`);
      assert.notEqual(first.next, undefined);
      const names = first.items.map((h) => h.event.metadata.name!);
      for (let after = first.next, pages = 0; after !== undefined; pages++) {
        assert.ok(pages < 10);
        const page = search.search({ ...request, maxExamined: 500, after }, a.rv);
        names.push(...page.items.map((h) => h.event.metadata.name!));
        after = page.next;
      }
      assert.deepEqual(names, Array.from({ length: 12 }, (_, i) => `big${String(i).padStart(2, '0')}`));
      // Unbounded (no maxExamined), one read answers the page whole, as before.
      assert.equal(search.search(request, a.rv).items.length, 12);
    });

    void it('reads pages and windows far below the head as a walk from the head would', () => {
      const a = new Archive(tokenizer);
      // Words of every frequency over ten hours, several events a second, and versions superseded by later ones.
      const words = ['common', 'often', 'sometimes', 'seldom'];
      let seed = 7;
      const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
      const expected = new Map<string, { ms: number; text: string }>();
      for (let i = 0; i < 1500; i++) {
        const name = `e${String(Math.floor(random() * 1200)).padStart(4, '0')}`;
        const ms = NOW - Math.floor(random() * 10 * 3_600_000);
        const text = words.filter((_, w) => random() < [0.9, 0.3, 0.05, 0.005][w]!).join(' ') || 'nothing';
        a.put(ev(name, text, ms));
        expected.set(name, { ms, text });
      }
      const search = new SqliteSearch(a.db, tokenizer);
      // Windows nearer the oldest entry than the head are read from their start, in chunks of versions (`often` in the
      // first four hours, `common -often` in the first three, hold more than one); the others from their end.
      const windows = [['common', 9, 8], ['seldom', 10, 0], ['often -sometimes', 6, 2], ['sometimes', 10, 9.5], ['common', 10, 0], ['often', 10, 6], ['common -often', 10, 7]] as const;
      for (const [q, sinceH, untilH] of windows) {
        const sinceMs = NOW - sinceH * 3_600_000;
        const untilMs = NOW - untilH * 3_600_000;
        const [word, not] = q.split(' -');
        const want = [...expected]
          .filter(([, e]) => e.ms >= sinceMs && e.ms < untilMs && e.text.split(' ').includes(word!) && (not === undefined || !e.text.split(' ').includes(not)))
          .sort(([ak, ae], [bk, be]) => be.ms - ae.ms || (ak < bk ? -1 : 1))
          .map(([name]) => name);
        const query = parseSearchQuery(`${q} since:${new Date(sinceMs).toISOString()} until:${new Date(untilMs).toISOString()}`, { nowMs: NOW });
        const paged: string[] = [];
        let after: SearchCursor | undefined;
        for (let pages = 0; pages === 0 || after !== undefined; pages++) {
          assert.ok(pages < 200, q);
          const page = search.search({ query, limit: 7, ...(after !== undefined ? { after } : {}) }, a.rv);
          paged.push(...page.items.map((h) => h.event.metadata.name!));
          after = page.next;
        }
        assert.deepEqual(paged, want, q);
      }
    });

    void it('reads on past a chunk of a window\'s entries whose versions are all superseded', () => {
      const a = new Archive(tokenizer);
      const start = NOW - 10 * 3_600_000;
      // Among three times as many other events, so the word is not common enough to be looked for by time.
      for (let i = 0; i < 300; i++) {
        a.put(ev(`gone-${String(i).padStart(3, '0')}`, 'vanishing words', start + i * 1000));
        for (let k = 1; k <= 3; k++) a.put(ev(`other-${i}-${k}`, 'other words', start + i * 1000 + k));
      }
      // The newest 280 are written again without the word, an hour ago: the window's newest entries are all past versions.
      for (let i = 20; i < 300; i++) a.put(ev(`gone-${String(i).padStart(3, '0')}`, 'renewed', NOW - 3_600_000 + i));
      const window = `since:${new Date(start - 60_000).toISOString()} until:${new Date(start + 3_600_000).toISOString()}`;
      const want = Array.from({ length: 20 }, (_, i) => `gone-${String(19 - i).padStart(3, '0')}`);
      assert.deepEqual(a.search(`vanishing ${window}`), want);
      assert.deepEqual(a.search(`vanishing ${window}`, { limit: 5 }), want.slice(0, 5));
    });

    void it('finds a keyword value whole by its token, and never a word or a phrase by one', () => {
      const a = new Archive(tokenizer);
      assert.ok(indexHoldsValueTokens(a.db));
      const at = (name: string, i: number, host: string, component: string, message = 'node status'): void => {
        a.put(ev(name, message, NOW - i * 1000, { source: { component, host } }));
      };
      // Values whose words others share, one whose words joined are another's, one with another separator.
      at('a', 1, 'ip-10-0-3-17.ec2.internal', 'node-controller');
      at('b', 2, 'ip-10-0-3-1.ec2.internal', 'controller-node');
      at('c', 3, 'ip-10-0-31-7.ec2.internal', 'node-controller', 'ip100317ec2internal seen');
      at('d', 4, 'ip-10-0-3-17.EC2.internal', 'kubelet');
      at('e', 5, 'ip.10.0.3.17.ec2.internal', 'node');
      assert.deepEqual(a.search('node:ip-10-0-3-17.ec2.internal'), ['a', 'd']);
      assert.deepEqual(a.search('node:ip-10-0-31-7.ec2.internal'), ['c']);
      assert.deepEqual(a.search('controller:node-controller'), ['a', 'c']);
      assert.deepEqual(a.search('controller:node'), ['e']);
      assert.deepEqual(a.search('node:ip-10-0-3-1*'), ['a', 'b', 'd'], 'a prefix reads the words');
      assert.deepEqual(a.search('ip100317ec2internal'), ['c'], 'a word is only ever a word');
      assert.deepEqual(a.search('"internal ip100317ec2internal"'), []);
      if (tokenizer === 'unicode61') assert.deepEqual(a.search('status -ip100317ec2internal'), ['a', 'b', 'd', 'e'], 'an exclusion never takes a value for a word');
      assert.deepEqual(a.search('node status', { namespace: 'shop' }), ['a', 'b', 'd', 'e']);
    });

    void it('indexes the words searchWords finds, a value of ASCII characters as it is and any other as its words', () => {
      const a = new Archive(tokenizer);
      const ascii = ev('ascii', 'Failed to pull image "Registry.EXAMPLE.io/app_v2:1.0": x509: certificate has expired (tls\thandshake)', NOW - 1000, {
        reason: 'FailedPull',
        source: { component: 'kubelet', host: 'ip-10-0-3-17.EC2.internal' },
      });
      // Beyond ASCII unicode61 would split at a combining mark, which searchWords keeps in its word.
      const other = ev('other', 'cafe\u0301 Ärger über x\u2013y', NOW - 2000, { reason: 'Ünhealthy', source: { component: 'node-controller', host: 'nœud-1' } });
      a.put(ascii);
      a.put(other);
      assert.deepEqual(a.search('"app v2 1 0" x509'), ['ascii']);
      assert.deepEqual(a.search('registry.example.io -tls'), []);
      assert.deepEqual(a.search('node:ip-10-0-3-17.ec2.internal reason:failedpull'), ['ascii']);
      assert.deepEqual(a.search('ärger "über x"'), ['other']);
      assert.deepEqual(a.search('node:nœud-1 controller:node-controller reason:ünhealthy'), ['other']);
      if (tokenizer !== 'unicode61') return;
      a.db.exec("CREATE VIRTUAL TABLE temp.search_terms USING fts5vocab(main, 'search_fts', 'instance')");
      const terms = a.db.prepare<[string], { term: string }>('SELECT term FROM temp.search_terms WHERE doc = (SELECT max(docid) FROM search_docs WHERE rv = 1) AND col = ? ORDER BY offset');
      for (const f of SEARCH_TEXT_FIELDS) {
        const words = searchWords(searchFieldValue(ascii, f));
        const token = KEYED_FIELDS.has(f) ? valueToken(words) : undefined;
        assert.deepEqual(terms.all(f).map((r) => r.term), token === undefined ? words : [...words, token], f);
      }
    });

    void it('answers by the phrases of the values\' words on an index written before value tokens, and by their tokens once rebuilt', () => {
      const a = new Archive(tokenizer);
      const hosts = ['ip-10-0-3-17.ec2.internal', 'ip-10-0-3-1.ec2.internal', 'ip-10-0-3-17.ec2.internal'];
      for (const [i, host] of hosts.entries()) a.put(ev(`e${i}`, 'words', NOW - i * 1000, { source: { component: 'node-controller', host } }));
      a.put(ev('gone', 'words', NOW - 9000, { source: { component: 'node-controller', host: hosts[0] } }));
      a.drop(a.rv);
      // The index as schema 8 wrote it: each field's words only, and no mark in meta.
      a.db.exec(`DELETE FROM search_fts; DELETE FROM meta WHERE name = '${VALUE_TOKENS_META}'`);
      const rows = a.db.prepare<[], { docid: number; rv: number }>('SELECT docid, rv FROM search_docs').all();
      for (const { docid, rv } of rows) a.db.prepare('INSERT INTO search_fts (rowid, message, node, controller) VALUES (?, ?, ?, ?)').run(docid, 'words', hosts[rv - 1]!.split(/[-.]/).join(' '), 'node controller');
      assert.ok(!indexHoldsValueTokens(a.db));
      const queries = ['node:ip-10-0-3-17.ec2.internal', 'controller:node-controller node:ip-10-0-3-1.ec2.internal', 'node:ip-10-0-3-1*', 'words'];
      const want = [['e0', 'e2'], ['e1'], ['e0', 'e1', 'e2'], ['e0', 'e1', 'e2']];
      assert.deepEqual(queries.map((q) => a.search(q)), want, 'before');
      const progress: string[] = [];
      assert.equal(a.db.transaction(() => rebuildSearchText(a.db, (done, total) => progress.push(`${done}/${total}`), 2))(), 3);
      assert.deepEqual(progress, ['2/3', '3/3']);
      assert.ok(indexHoldsValueTokens(a.db));
      assert.deepEqual(queries.map((q) => a.search(q)), want, 'rebuilt');
      a.db.exec("CREATE VIRTUAL TABLE temp.search_words USING fts5vocab(main, 'search_fts', 'row')");
      const terms = a.db.prepare<[], { term: string }>('SELECT term FROM temp.search_words').all().map((r) => r.term);
      if (tokenizer === 'unicode61') assert.ok(terms.includes('\u{e000}ip100317ec2internal') && terms.includes('\u{e000}nodecontroller'), JSON.stringify(terms));
    });

    void it('counts a histogram over every hit of the window', async () => {
      const a = new Archive(tokenizer);
      for (let i = 0; i < 10; i++) a.put(ev(`e${i}`, i % 2 === 0 ? 'even words' : 'odd words', NOW - i * 60_000 - 1));
      const histogram = await new SqliteSearch(a.db, tokenizer).histogram(
        { query: parseSearchQuery('even', { nowMs: NOW }), limit: 1, histogram: { sinceMs: NOW - 10 * 60_000, untilMs: NOW, bucketMs: 5 * 60_000 } },
        a.rv,
        () => Promise.resolve(),
      );
      assert.deepEqual(histogram.map((b) => b.hits), [2, 3]);
    });

    void it('counts a histogram SQL decides in statements over ranges of seconds, pausing between two', async () => {
      const a = new Archive(tokenizer);
      for (let i = 0; i < 1200; i++) a.put(ev(`e${i}`, 'some words', NOW - i * 1000 - 1));
      let pauses = 0;
      const histogram = await new SqliteSearch(a.db, tokenizer).histogram(
        { query: parseSearchQuery('words', { nowMs: NOW }), limit: 1, histogram: { sinceMs: NOW - 1200 * 1000, untilMs: NOW, bucketMs: 300 * 1000 } },
        a.rv,
        () => Promise.resolve(void pauses++),
      );
      assert.deepEqual(histogram.map((b) => b.hits), [300, 300, 300, 300]);
      assert.ok(pauses >= 1, `paused ${pauses} times over 1,200 seconds of hits`);
    });

    void it('decodes the candidates of a histogram SQL cannot count alone a chunk at a time, pausing between two', async () => {
      const a = new Archive(tokenizer);
      for (let i = 0; i < 1200; i++) a.put(ev(`e${i}`, 'some words', NOW - i * 1000 - 1));
      let pauses = 0;
      const histogram = await new SqliteSearch(a.db, tokenizer).histogram(
        { query: parseSearchQuery('name:pod-* -name:pod-e1*', { nowMs: NOW }), limit: 1, histogram: { sinceMs: NOW - 1200 * 1000, untilMs: NOW, bucketMs: 600 * 1000 } },
        a.rv,
        () => Promise.resolve(void pauses++),
      );
      // Every event but e1, e10-e19, e100-e199 and e1000-e1199, oldest bucket first: e600-e1199, then e0-e599.
      assert.deepEqual(histogram.map((b) => b.hits), [600 - 200, 600 - 1 - 10 - 100]);
      assert.ok(pauses >= 2, `paused ${pauses} times over 1,200 candidates`);
    });
  });
}
