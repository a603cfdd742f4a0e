import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from './support/http.js';
import { POSTGRES_URL, testSchemas } from './support/postgres.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * The archive's search served by `kevents serve` (the built CLI) over a
 * PostgreSQL archive: the same route and answers as over SQLite, through the
 * store's tsvector index, with pages over one snapshot, a histogram, and a
 * query error as a 400 Status naming its position.
 */

const { fresh } = testSchemas('kevents_search_serve');
const ARCHIVE = '/apis/archive.kevents.io/v1alpha1';
const q = (query: string): string => encodeURIComponent(query);
const names = (json: any): string[] => json.items.map((i: any) => i.event.metadata.name);

function event(namespace: string, name: string, reason: string, message: string, lastMs: number, node: string): object {
  const at = new Date(lastMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    metadata: { name, namespace },
    involvedObject: { kind: 'Pod', name: `pod-${name}`, namespace },
    reason,
    message,
    type: 'Warning',
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
    source: { component: 'kubelet', host: node },
  };
}

void describe('the search route of kevents serve over PostgreSQL', () => {
  let srv: ServerProcess;
  const now = Math.floor(Date.now() / 1000) * 1000;
  before(async () => {
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', fresh());
    srv = await startServer(['--storage', url.toString()]);
    const post = async (ns: string, body: object): Promise<void> => {
      const r = await request(srv.url, 'POST', `/api/v1/namespaces/${ns}/events`, body);
      assert.equal(r.status, 201, r.text);
    };
    for (let i = 0; i < 5; i++) await post('shop', event('shop', `mount-${i}`, 'FailedMount', `MountVolume.SetUp failed for volume "certs-${i}" : secret "tls" not found`, now - (i + 1) * 60_000, 'worker-1'));
    await post('shop', event('shop', 'backoff', 'BackOff', 'Back-off restarting failed container db', now - 30_000, 'worker-2'));
    await post('ops', event('ops', 'other', 'FailedMount', 'MountVolume.SetUp failed for volume "data"', now - 10 * 60_000, 'worker-2'));
  });
  after(async () => {
    await srv?.stop();
  });

  void it('answers a SearchResult: hits newest first, with the fields they matched and their occurrences', async () => {
    const r = await request(srv.url, 'GET', `${ARCHIVE}/search?q=${q('mountvolume node:worker-2')}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.kind, 'SearchResult');
    assert.deepEqual(names(r.json), ['other']);
    assert.deepEqual(r.json.items[0].matched, ['message', 'node']);
    assert.ok(Array.isArray(r.json.items[0].occurrences));
    const phrase = await request(srv.url, 'GET', `${ARCHIVE}/namespaces/shop/search?q=${q('"failed container" -reason:FailedMount')}`);
    assert.deepEqual(names(phrase.json), ['backoff']);
  });

  void it('pages by continue token over the first page\'s snapshot, with the histogram of the whole search', async () => {
    const since = new Date(now - 6 * 60_000).toISOString();
    const until = new Date(now).toISOString();
    const first = await request(srv.url, 'GET', `${ARCHIVE}/namespaces/shop/search?q=${q('reason:failedmount')}&limit=2&since=${since}&until=${until}&histogram=2m`);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(names(first.json), ['mount-0', 'mount-1']);
    assert.deepEqual(first.json.histogram.map((b: any) => b.hits), [1, 2, 2]);
    assert.ok(first.json.metadata.continue);
    // A write between pages is not in the snapshot the pages read.
    const r = await request(srv.url, 'POST', '/api/v1/namespaces/shop/events', event('shop', 'late', 'FailedMount', 'MountVolume.SetUp failed late', now - 90_000, 'worker-1'));
    assert.equal(r.status, 201, r.text);
    const seen = names(first.json);
    let token: string | undefined = first.json.metadata.continue;
    while (token !== undefined) {
      const page = await request(srv.url, 'GET', `${ARCHIVE}/namespaces/shop/search?q=${q('reason:failedmount')}&limit=2&continue=${encodeURIComponent(token)}`);
      assert.equal(page.status, 200, page.text);
      seen.push(...names(page.json));
      token = page.json.metadata.continue;
    }
    assert.deepEqual(seen, ['mount-0', 'mount-1', 'mount-2', 'mount-3', 'mount-4']);
    const latest = await request(srv.url, 'GET', `${ARCHIVE}/namespaces/shop/search?q=${q('reason:failedmount late')}`);
    assert.deepEqual(names(latest.json), ['late'], 'a new search reads the latest');
  });

  void it('answers a query that does not parse with a 400 Status naming the position', async () => {
    const r = await request(srv.url, 'GET', `${ARCHIVE}/search?q=${q('pull "image')}`);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.kind, 'Status');
    assert.match(r.json.message, /position 6/);
  });
});
