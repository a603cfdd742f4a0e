import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEtcd } from './support/etcd.js';
import type { EtcdCluster } from './support/etcd.js';
import { checkCollectionDelete } from './support/collection-delete.js';
import { legacyEvent, request } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

const kubectl = findKubectls().at(-1);

/** etcdSpec turns member URLs into the `etcd://HOST:PORT,…` form of --storage. */
function etcdSpec(endpoints: string[]): string {
  return `etcd://${endpoints.map((e) => new URL(e).host).join(',')}`;
}

/** watchFrames opens a watch and collects its frames until `n` have arrived. */
async function watchFrames(base: string, path: string, n: number): Promise<{ type: string; object: { metadata: { name: string; resourceVersion: string } } }[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 30_000);
  const res = await fetch(base + path, { signal: ac.signal });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const frames = [];
  let buf = '';
  try {
    while (frames.length < n) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (line !== '') frames.push(JSON.parse(line));
      }
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return frames;
}

void describe('two kevents serve replicas over one etcd cluster', () => {
  let cluster: EtcdCluster;
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  before(async () => {
    cluster = await startEtcd({ members: 3 });
    // Each replica talks to different members, so what one sees of the other's writes went through etcd's replication.
    a = await startServer(['--storage', etcdSpec([cluster.members[0]!.endpoint])]);
    b = await startServer(['--storage', etcdSpec([cluster.members[1]!.endpoint, cluster.members[2]!.endpoint])]);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await cluster?.stop();
  });

  void it('a deletecollection of several pages through one replica deletes each event once, and the other replica\'s watchers see every delete', { timeout: 120_000 }, async () => {
    // etcd commits each delete on its own: the other replica sees every one, in etcd's order.
    await checkCollectionDelete(a!.url, b!.url, 'dc', { ordered: false });
  });

  void it('a write through one replica reaches watchers on the other in order with the same resourceVersions; kubectl sees the same events on both', { timeout: 60_000 }, async (t) => {
    const list = await request(b!.url, 'GET', '/api/v1/namespaces/default/events');
    assert.equal(list.status, 200, list.text);
    const n = 20;
    const watching = watchFrames(b!.url, `/api/v1/namespaces/default/events?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`, n + 1);
    const acked: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await request(a!.url, 'POST', '/api/v1/namespaces/default/events', legacyEvent({ name: `web-${i}.x`, object: `web-${i}`, reason: 'Started', message: `started ${i}`, firstAgo: 60, lastAgo: 60 }));
      assert.equal(r.status, 201, r.text);
      acked.push(`ADDED ${r.json.metadata.name}@${r.json.metadata.resourceVersion}`);
    }
    const patched = await request(a!.url, 'PATCH', '/api/v1/namespaces/default/events/web-3.x', { count: 2 }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    acked.push(`MODIFIED web-3.x@${patched.json.metadata.resourceVersion}`);
    const frames = await watching;
    assert.deepEqual(
      frames.map((f) => `${f.type} ${f.object.metadata.name}@${f.object.metadata.resourceVersion}`),
      acked,
    );
    if (kubectl === undefined) {
      t.diagnostic('no kubectl on this machine: the kubectl half is not run');
      return;
    }
    const columns = ['get', 'events', '-n', 'default', '--sort-by=.metadata.name', '-o', 'custom-columns=NAME:.metadata.name,RV:.metadata.resourceVersion,COUNT:.count'];
    const viaA = await runKubectl(kubectl, a!.url, columns);
    const viaB = await runKubectl(kubectl, b!.url, columns);
    assert.equal(viaA.code, 0, viaA.stderr);
    assert.equal(viaB.stdout, viaA.stdout);
    assert.equal(viaB.stdout.trim().split('\n').length, n + 1);
    assert.match(viaB.stdout, new RegExp(`web-3\\.x\\s+${patched.json.metadata.resourceVersion}\\s+2`));
    // A replica that dies takes no acknowledged write with it.
    await a!.stop('SIGKILL');
    const after = await runKubectl(kubectl, b!.url, columns);
    assert.equal(after.stdout, viaA.stdout);
  });
});
