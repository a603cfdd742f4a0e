import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../internal/index.js';
import { StorageError } from '../../storage/index.js';
import type { SearchPage, SearchRequest } from '../../storage/index.js';
import { MemoryEventStore } from '../../storage/memory/index.js';
import { createEventsServer } from '../server.js';
import type { KeventsServer } from '../server.js';

const ARCHIVE = '/apis/archive.kevents.io/v1alpha1';
const T0 = Date.parse('2026-06-01T00:00:00Z');

function event(namespace: string, name: string, reason: string, message: string, lastMs: number): string {
  return JSON.stringify({
    metadata: { name, namespace },
    involvedObject: { kind: 'Pod', name: `pod-${name}`, namespace },
    reason,
    message,
    type: 'Warning',
    count: 1,
    firstTimestamp: new Date(lastMs).toISOString(),
    lastTimestamp: new Date(lastMs).toISOString(),
    source: { component: 'kubelet', host: 'worker-1' },
  });
}

async function call(base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method, ...(body !== undefined ? { body } : {}), headers: { 'Content-Type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

const names = (json: any): string[] => json.items.map((i: any) => i.event.metadata.name);
const q = (query: string): string => encodeURIComponent(query);

void describe('search route', () => {
  const clock = new FakeClock(T0);
  let server: KeventsServer;
  let base: string;
  before(async () => {
    server = createEventsServer({ store: new MemoryEventStore({ clock }), clock });
    base = `http://127.0.0.1:${(await server.listen('127.0.0.1', 0)).port}`;
    const post = async (ns: string, body: string): Promise<void> => {
      const r = await call(base, 'POST', `/api/v1/namespaces/${ns}/events`, body);
      assert.equal(r.status, 201, JSON.stringify(r.json));
      await clock.advance(1000);
    };
    await post('shop', event('shop', 'a', 'FailedMount', 'MountVolume.SetUp failed for volume "certs" : secret "tls" not found', T0 - 3_600_000));
    await post('shop', event('shop', 'b', 'BackOff', 'Back-off restarting failed container', T0 - 1_800_000));
    await post('ops', event('ops', 'c', 'FailedMount', 'MountVolume.SetUp failed for volume "data"', T0 - 600_000));
    const r = await call(base, 'PATCH', '/api/v1/namespaces/shop/events/a', JSON.stringify({ count: 2, lastTimestamp: new Date(T0 - 3_000_000).toISOString() }), {
      'Content-Type': 'application/merge-patch+json',
    });
    assert.equal(r.status, 200);
  });
  after(async () => {
    await server.close();
  });

  void it('answers a SearchResult: hits newest first, with the fields matched and their occurrences', async () => {
    const r = await call(base, 'GET', `${ARCHIVE}/search?q=${q('mountvolume')}`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.kind, 'SearchResult');
    assert.equal(r.json.apiVersion, 'archive.kevents.io/v1alpha1');
    assert.equal(r.json.metadata.continue, undefined);
    assert.ok(Number(r.json.metadata.resourceVersion) > 0);
    assert.deepEqual(names(r.json), ['c', 'a']);
    assert.deepEqual(r.json.items[1].matched, ['message']);
    assert.equal(r.json.items[1].event.count, 2);
    assert.deepEqual(r.json.items[1].occurrences.map((o: any) => `${o.countBefore}->${o.countAfter}`), ['0->1', '1->2']);
    assert.equal(r.json.histogram, undefined);
  });

  void it('keeps to the namespace of the path', async () => {
    const r = await call(base, 'GET', `${ARCHIVE}/namespaces/shop/search?q=${q('reason:FailedMount')}`);
    assert.deepEqual(names(r.json), ['a']);
    assert.deepEqual(r.json.items[0].matched, ['reason']);
  });

  void it('bounds the window by since and until, and the occurrences by it too', async () => {
    const since = new Date(T0 - 3_200_000).toISOString();
    const r = await call(base, 'GET', `${ARCHIVE}/search?since=${since}&until=${new Date(T0 - 1_000_000).toISOString()}`);
    assert.deepEqual(names(r.json), ['b', 'a']);
    assert.deepEqual(r.json.items[1].occurrences.map((o: any) => `${o.countBefore}->${o.countAfter}`), ['1->2'], 'only the change that happened in the window');
    const narrower = await call(base, 'GET', `${ARCHIVE}/search?since=${since}&q=${q('since:40m')}`);
    assert.deepEqual(names(narrower.json), ['c', 'b'], 'the narrower of the two starts holds');
  });

  void it('pages by continue token over the first page\'s snapshot', async () => {
    const first = await call(base, 'GET', `${ARCHIVE}/search?limit=1`);
    assert.deepEqual(names(first.json), ['c']);
    assert.equal(typeof first.json.metadata.continue, 'string');
    await call(base, 'POST', '/api/v1/namespaces/shop/events', event('shop', 'late', 'BackOff', 'written between pages', T0));
    const seen = names(first.json);
    let token: string | undefined = first.json.metadata.continue;
    while (token !== undefined) {
      const page = await call(base, 'GET', `${ARCHIVE}/search?limit=1&continue=${token}`);
      assert.equal(page.status, 200, JSON.stringify(page.json));
      assert.equal(page.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
      seen.push(...names(page.json));
      token = page.json.metadata.continue;
    }
    assert.deepEqual(seen, ['c', 'b', 'a']);
    assert.deepEqual(names((await call(base, 'GET', `${ARCHIVE}/search`)).json), ['late', 'c', 'b', 'a']);
    await call(base, 'DELETE', '/api/v1/namespaces/shop/events/late');
  });

  void it('adds the hits per bucket over the window when asked', async () => {
    const r = await call(base, 'GET', `${ARCHIVE}/search?q=${q('type:warning')}&since=${new Date(T0 - 3_600_000).toISOString()}&until=${new Date(T0).toISOString()}&histogram=20m&limit=1`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.histogram, [
      { time: '2026-05-31T23:00:00.000000Z', hits: 1 },
      { time: '2026-05-31T23:20:00.000000Z', hits: 1 },
      { time: '2026-05-31T23:40:00.000000Z', hits: 1 },
    ]);
  });

  const refused: [string, string, RegExp][] = [
    ['a query that does not parse, with its position', `q=${q('pull "image')}`, /^q: invalid search query at position 6: the quote is never closed$/],
    ['an unknown field', `q=${q('http://x')}`, /unknown field "http"/],
    ['a bad time', 'since=yesterday', /since: invalid time "yesterday"/],
    ['a window that ends before it starts', `q=${q('since:1h')}&until=2020-01-01T00:00:00Z`, /until must be after since/],
    ['a bad limit', 'limit=ten', /limit: strconv.ParseInt/],
    ['a forged continue token', 'continue=bm9wZQ', /invalid continue token/],
    ['a bad histogram bucket', 'since=2026-05-31T00:00:00Z&histogram=often', /histogram: invalid duration "often"/],
    ['a histogram with no start', 'histogram=1m', /histogram: needs the start of a window/],
    ['a histogram of too many buckets', 'since=2025-01-01T00:00:00Z&histogram=1s', /more than 1000.*larger bucket/],
    ['a phrase of one word repeated 250 times', `q=${q(`"${Array<string>(250).fill('ip').join(' ')}"`)}`, /^q: invalid search query at position 1: a phrase or value of 250 words is more than 32; search for fewer of its words$/],
    ['a query of more than 32 terms', `q=${q(Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '))}`, /more than 32 terms/],
  ];
  for (const [what, query, message] of refused) {
    void it(`refuses ${what} with a 400 Status`, async () => {
      const r = await call(base, 'GET', `${ARCHIVE}/search?${query}`);
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.equal(r.json.kind, 'Status');
      assert.equal(r.json.reason, 'BadRequest');
      assert.match(r.json.message, message);
    });
  }

  void it('refuses a search a page of another site sends with a 403 Status, unless it carries a bearer token', async () => {
    const crossSite = { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' };
    const r = await call(base, 'GET', `${ARCHIVE}/search?q=certs`, undefined, crossSite);
    assert.equal(r.status, 403, JSON.stringify(r.json));
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'Forbidden');
    assert.match(r.json.message, /from another site \(Sec-Fetch-Site: cross-site\) is refused/);
    assert.equal((await call(base, 'GET', `${ARCHIVE}/namespaces/shop/search?q=certs`, undefined, { Origin: 'http://127.0.0.1:1' })).status, 403, 'an older browser: another Origin');
    assert.equal((await call(base, 'GET', `${ARCHIVE}/search?q=certs`, undefined, { ...crossSite, Authorization: 'Bearer any' })).status, 200, 'a client with a token');
    assert.equal((await call(base, 'GET', `${ARCHIVE}/search?q=certs`, undefined, { 'Sec-Fetch-Site': 'same-origin' })).status, 200, 'the web UI');
    assert.equal((await call(base, 'GET', `${ARCHIVE}/search?q=certs`)).status, 200, 'kubectl and other clients');
  });

  void it('answers 405 to anything but GET', async () => {
    assert.equal((await call(base, 'POST', `${ARCHIVE}/search`, '{}')).status, 405);
  });

  void it('answers a continue token whose snapshot is compacted with 410 Expired', async () => {
    const first = await call(base, 'GET', `${ARCHIVE}/search?limit=1`);
    await call(base, 'DELETE', '/api/v1/namespaces/shop/events/b');
    await clock.advance(2 * 3_600_000);
    const r = await call(base, 'GET', `${ARCHIVE}/search?limit=1&continue=${first.json.metadata.continue}`);
    assert.equal(r.status, 410, JSON.stringify(r.json));
    assert.equal(r.json.reason, 'Expired');
  });
});

/** TimedOutStore is an archive whose every search is cancelled past its limit, as a PostgreSQL search past its statement_timeout is. */
class TimedOutStore extends MemoryEventStore {
  override search(_request: SearchRequest): Promise<SearchPage> {
    return Promise.reject(new StorageError('Timeout', 'the search took longer than its limit of 10 s per statement and was cancelled: narrow the query or its window (since, until)'));
  }
}

void describe('search route over a search past its limit', () => {
  let server: KeventsServer;
  let base: string;
  before(async () => {
    const clock = new FakeClock(T0);
    server = createEventsServer({ store: new TimedOutStore({ clock }), clock });
    base = `http://127.0.0.1:${(await server.listen('127.0.0.1', 0)).port}`;
  });
  after(async () => {
    await server.close();
  });

  for (const [what, query] of [
    ['a first page', `q=${q('mountvolume')}`],
    ['a histogram', `q=${q('reason:BackOff')}&histogram=1h&since=${new Date(T0 - 86_400_000).toISOString()}`],
  ] as const) {
    void it(`answers ${what} with kube-apiserver's 504 Timeout Status, not a 500`, async () => {
      const r = await call(base, 'GET', `${ARCHIVE}/namespaces/shop/search?${query}`);
      assert.equal(r.status, 504, JSON.stringify(r.json));
      assert.equal(r.json.kind, 'Status');
      assert.equal(r.json.status, 'Failure');
      assert.equal(r.json.reason, 'Timeout');
      assert.equal(r.json.code, 504);
      assert.match(r.json.message, /^the search took longer than its limit of 10 s per statement and was cancelled: narrow the query or its window/);
    });
  }
});
