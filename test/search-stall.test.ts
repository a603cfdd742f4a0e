import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { CoreEvent } from '../src/api/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { request } from './support/http.js';
import { startServer } from './support/server-process.js';

/**
 * A search no index narrows does not stall the server: `kevents serve` (the
 * built CLI) over a SQLite archive of 150,000 events answers four of the
 * search's worst cases at once (a phrase of one common word, a namespace that
 * is none, a histogram of a common word, a histogram SQL cannot count alone)
 * while /healthz is asked again and again: each search answers 200 or a
 * Status, and /healthz answers while they run, not only once they all have.
 * The longest /healthz took is printed, not asserted on.
 */

const dir = mkdtempSync(join(tmpdir(), 'kevents-search-stall-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** EVENTS is the archive's size: where the worst cases took a second or more before their reads were bounded. */
const EVENTS = 150_000;
const BATCH = 1000;
const ARCHIVE = '/apis/archive.kevents.io/v1alpha1';
const APPS = ['checkout', 'cart', 'web', 'api', 'payments', 'search'];
const CONTAINERS = ['app', 'sidecar', 'istio-proxy', 'main'];

/** event is the i-th of the archive: kubelet's words on one of 256 nodes named as EC2 names them (`ip-10-0-…`), over the last six days. */
function event(i: number, nowMs: number): CoreEvent {
  const app = APPS[i % APPS.length]!;
  const node = `ip-10-0-${i % 16}-${i % 251}.ec2.internal`;
  const t = new Date(nowMs - 6 * 24 * 3_600_000 + Math.floor((i / EVENTS) * 6 * 24 * 3_600_000)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const namespace = `team-${i % 40}`;
  const container = CONTAINERS[i % CONTAINERS.length]!;
  return {
    metadata: { namespace, name: `${app}-${i}.${i.toString(16)}` },
    involvedObject: { kind: 'Pod', namespace, name: `${app}-${i % 997}` },
    reason: i % 3 === 0 ? 'Started' : 'Created',
    type: 'Normal',
    message: i % 3 === 0 ? `Started container ${container}` : `Created container: ${container}`,
    source: { component: 'kubelet', host: node },
    reportingComponent: 'kubelet',
    reportingInstance: node,
    count: 1,
    firstTimestamp: t,
    lastTimestamp: t,
  };
}

/** fill writes the archive through the store's bulk path (the mirror's), a batch at a time. */
async function fill(path: string, nowMs: number): Promise<void> {
  const store = new SqliteEventStore({ path });
  await store.ready();
  for (let i = 0; i < EVENTS; i += BATCH) {
    const writes = Array.from({ length: BATCH }, (_, j) => event(i + j, nowMs)).map((e) => ({
      namespace: e.metadata.namespace!,
      name: e.metadata.name!,
      decide: () => ({ action: 'write' as const, object: e, occurrence: { countBefore: 0, countAfter: 1 } }),
    }));
    await store.applyArchiveBatch({ writes, stamp: {} });
  }
  await store.close();
}

void describe('search stall (kevents serve over SQLite, 150,000 events)', () => {
  void it('answers /healthz while four worst-case searches run at once', { timeout: 600_000 }, async () => {
    const path = join(dir, 'archive.db');
    const nowMs = Date.now();
    await fill(path, nowMs);
    const srv = await startServer(['--storage', `sqlite:${path}`]);
    try {
      const since = encodeURIComponent(new Date(nowMs - 7 * 24 * 3_600_000).toISOString());
      const q = (query: string): string => encodeURIComponent(query);
      const searches = [
        `q=${q(`"${Array<string>(32).fill('ip').join(' ')}"`)}`,
        `q=${q('ns:team')}`,
        `q=container&since=${since}&histogram=1h`,
        `q=${q('name:web*')}&since=${since}&histogram=1h`,
      ];
      let running = true;
      const health: { ms: number; endedAt: number }[] = [];
      const poll = (async () => {
        while (running) {
          const started = performance.now();
          const r = await request(srv.url, 'GET', '/healthz');
          assert.equal(r.status, 200, r.text);
          health.push({ ms: performance.now() - started, endedAt: performance.now() });
        }
      })();
      const startedAt = performance.now();
      const answers = await Promise.all(
        searches.map(async (s) => {
          const r = await request(srv.url, 'GET', `${ARCHIVE}/search?${s}`);
          return { s, status: r.status, text: r.text, endedAt: performance.now() };
        }),
      );
      running = false;
      await poll;
      for (const a of answers) {
        const body = JSON.parse(a.text) as { kind?: string };
        // A search answers its page (perhaps short, with a continue token), or a Status saying why not: never a 500.
        assert.ok(a.status === 200 ? body.kind === 'SearchResult' : body.kind === 'Status' && a.status !== 500, `${a.s}: ${a.status} ${a.text.slice(0, 300)}`);
      }
      const lastEnded = Math.max(...answers.map((a) => a.endedAt));
      const meanwhile = health.filter((h) => h.endedAt > startedAt && h.endedAt < lastEnded);
      const max = Math.max(...health.map((h) => h.ms));
      console.log(
        `searches: ${answers.map((a) => `${a.status} in ${(a.endedAt - startedAt).toFixed(0)} ms`).join(', ')}; ` +
          `/healthz answered ${meanwhile.length} times while they ran, the longest in ${max.toFixed(1)} ms`,
      );
      assert.ok(meanwhile.length > 0, '/healthz answered while the searches ran, not only once they all had');
    } finally {
      await srv.stop();
    }
  });
});
