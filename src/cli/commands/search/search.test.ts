import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createEventsServer } from '../../../server/index.js';
import type { KeventsServer } from '../../../server/index.js';
import { MemoryEventStore } from '../../../storage/memory/index.js';
import { UsageError } from '../../errors.js';
import { runSearch, validateSearch } from './search.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

void describe('validateSearch', () => {
  void it('joins the words of the query and adds the cluster as a literal term', () => {
    const o = validateSearch(['x509', '"certificate has expired"'], { cluster: ['prod-eu'] }, NOW);
    assert.equal(o.q, 'x509 "certificate has expired" cluster:"prod-eu"');
    assert.deepEqual(o.query.terms.map((t) => (t.kind === 'text' ? t.words.join(' ') : `${t.field}:${t.value}`)), ['x509', 'certificate has expired', 'cluster:prod-eu']);
    assert.equal(o.limit, 100);
    assert.equal(o.chunk, 500);
  });

  void it('reads the window as the timeline does', () => {
    const o = validateSearch(['x'], { since: '2h', until: '2025-06-01T11:30:00Z' }, NOW);
    assert.equal(o.since, '2025-06-01T10:00:00.000Z');
    assert.equal(o.until, '2025-06-01T11:30:00.000Z');
  });

  const refused: [string, string[], object, RegExp][] = [
    ['a query that does not parse', ['pull', '"image'], {}, /invalid search query at position 6: the quote is never closed/],
    ['a phrase past the bound of words', [`"${Array<string>(250).fill('ip').join(' ')}"`], {}, /^invalid search query at position 1: a phrase or value of 250 words is more than 32; search for fewer of its words$/],
    ['two clusters', ['x'], { cluster: ['a', 'b'] }, /--cluster may be given once/],
    ['a cluster name that is no label value', ['x'], { cluster: ['a"b'] }, /invalid --cluster/],
    ['an unknown format', ['x'], { output: 'name' }, /-o must be one of table, wide, json, yaml/],
    ['a bad limit', ['x'], { limit: 'all' }, /--limit must be a whole number/],
    ['both --since and --since-time', ['x'], { since: '1h', sinceTime: '2025-06-01T00:00:00Z' }, /at most one of --since or --since-time/],
    ['an exclusion read as -n (-ns:kube-system)', ['x'], { namespace: 's:kube-system' }, /-n "s:kube-system" is not a namespace; an exclusion such as -ns:kube-system belongs to the query/],
  ];
  for (const [what, query, flags, message] of refused) {
    void it(`refuses ${what} as a usage error`, () => {
      assert.throws(
        () => validateSearch(query, flags, NOW),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
      );
    });
  }
});

void describe('runSearch', () => {
  let server: KeventsServer;
  let base: string;
  before(async () => {
    const store = new MemoryEventStore();
    server = createEventsServer({ store });
    base = `http://127.0.0.1:${(await server.listen('127.0.0.1', 0)).port}`;
    const now = Date.now();
    for (let i = 0; i < 5; i++) {
      const t = new Date(now - (i + 1) * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
      await store.create({
        metadata: { namespace: i % 2 === 0 ? 'shop' : 'ops', name: `e${i}` },
        involvedObject: { kind: 'Pod', namespace: 'shop', name: `web-${i}` },
        reason: 'BackOff',
        type: 'Warning',
        message: `Back-off restarting failed container app in pod web-${i}`,
        count: i + 1,
        firstTimestamp: t,
        lastTimestamp: t,
      });
    }
  });
  after(() => server.close());

  const run = async (query: string[], flags: Record<string, unknown>): Promise<{ out: string; err: string }> => {
    const out = sink();
    const err = sink();
    await runSearch(query, { server: base, ...flags }, { stdout: out.stream, stderr: err.stream, env: {} });
    return { out: out.text(), err: err.text() };
  };

  void it('prints the newest hits of every namespace as a table, reading page after page', async () => {
    const r = await run(['"back-off', 'restarting"'], { allNamespaces: true, chunkSize: '2' });
    const lines = r.out.trimEnd().split('\n');
    assert.match(lines[0]!, /^LAST SEEN +NAMESPACE +OBJECT +REASON +COUNT +MESSAGE$/);
    assert.deepEqual(lines.slice(1).map((l) => l.split(/ {2,}/)[2]), ['pod/web-0', 'pod/web-1', 'pod/web-2', 'pod/web-3', 'pod/web-4']);
    assert.equal(r.err, '');
  });

  void it('keeps to the namespace and stops at --limit, saying more match', async () => {
    const r = await run(['backoff'], { namespace: 'shop', limit: '2', chunkSize: '1' });
    assert.deepEqual(r.out.trimEnd().split('\n').slice(1).map((l) => l.split(/ {2,}/)[1]), ['pod/web-0', 'pod/web-2']);
    assert.equal(r.err, 'The newest 2 hits are shown; more match (--limit 0 shows them all).\n');
  });

  void it('prints -o json as the served document, with every page\'s items in one list', async () => {
    const r = await run(['container'], { allNamespaces: true, chunkSize: '2', limit: '0', output: 'json' });
    const doc = JSON.parse(r.out);
    assert.equal(doc.kind, 'SearchResult');
    assert.equal(doc.metadata.continue, undefined);
    assert.deepEqual(doc.items.map((i: { event: { metadata: { name: string } } }) => i.event.metadata.name), ['e0', 'e1', 'e2', 'e3', 'e4']);
    assert.deepEqual(doc.items[0].matched, ['message']);
  });

  void it('marks what the query matched in bold on a terminal only, and never with NO_COLOR', async () => {
    const print = async (tty: boolean, env: Record<string, string>): Promise<string> => {
      const out = sink();
      if (tty) Object.assign(out.stream, { isTTY: true });
      await runSearch(['"failed container"', 'name:web-0'], { server: base, namespace: 'shop', noHeaders: true }, { stdout: out.stream, stderr: sink().stream, env });
      return out.text().replace(/^\S+ +/, '');
    };
    assert.equal(await print(true, {}), 'pod/\x1b[1mweb-0\x1b[22m   BackOff   1     Back-off restarting \x1b[1mfailed container\x1b[22m app in pod web-0\n');
    assert.equal(await print(true, { NO_COLOR: '1' }), 'pod/web-0   BackOff   1     Back-off restarting failed container app in pod web-0\n');
    assert.equal(await print(false, {}), 'pod/web-0   BackOff   1     Back-off restarting failed container app in pod web-0\n');
  });

  void it('says when nothing matched', async () => {
    const r = await run(['nothing-like-this'], { namespace: 'shop' });
    assert.equal(r.out, '');
    assert.equal(r.err, 'No events found in shop namespace.\n');
  });

  void it('passes on the server\'s refusal of a query', async () => {
    await assert.rejects(run(['since:2020-01-01T00:00:00Z', 'until:2019-01-01T00:00:00Z'], {}), /until: must be after since:/);
  });
});
