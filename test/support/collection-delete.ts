/**
 * A deletecollection of several pages through one server, checked on another
 * over the same storage (or the same one): the answer lists every event in key
 * order, each deleted once, and a watcher of the other sees every delete.
 */
import assert from 'node:assert/strict';
import { legacyEvent, request } from './http.js';

/** watchDeletes collects the names and revisions of the first `n` DELETED frames of a watch. */
async function watchDeletes(url: string, n: number): Promise<{ name: string; rv: number }[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 60_000);
  const res = await fetch(url, { signal: ac.signal });
  assert.equal(res.status, 200);
  const seen: { name: string; rv: number }[] = [];
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of res.body!) {
      buf += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const f = JSON.parse(buf.slice(0, nl)) as { type: string; object: { metadata: { name: string; resourceVersion: string } } };
        buf = buf.slice(nl + 1);
        if (f.type === 'DELETED') seen.push({ name: f.object.metadata.name, rv: Number(f.object.metadata.resourceVersion) });
        if (seen.length === n) return seen;
      }
    }
    return seen;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

/**
 * checkCollectionDelete creates `count` events in `namespace` through `writer`,
 * deletes the collection through `writer` while `reader` is watched, and checks
 * both. `ordered`: the store commits a page's deletes in the order asked (one
 * group commit), so the watcher sees them in key order too.
 */
export async function checkCollectionDelete(writer: string, reader: string, namespace: string, o: { count?: number; ordered: boolean }): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/events`;
  const names = Array.from({ length: o.count ?? 1100 }, (_, i) => `dc-${String(i).padStart(4, '0')}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map(async (name) => {
        const r = await request(writer, 'POST', path, legacyEvent({ name, namespace, object: `web-${name}`, reason: 'Pulled', message: 'm', firstAgo: 1, lastAgo: 1 }));
        assert.equal(r.status, 201, r.text);
      }),
    );
  }
  const from = (await request(reader, 'GET', `${path}?limit=1`)).json.metadata.resourceVersion;
  const watching = watchDeletes(`${reader}${path}?watch=true&resourceVersion=${from}`, names.length);
  const r = await request(writer, 'DELETE', path);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.items.map((e: { metadata: { name: string } }) => e.metadata.name), names);
  const seen = await watching;
  assert.equal(seen.length, names.length, 'a DELETED frame for each event');
  assert.deepEqual(o.ordered ? seen.map((d) => d.name) : seen.map((d) => d.name).sort(), names);
  assert.ok(seen.every((d, i) => i === 0 || d.rv > seen[i - 1]!.rv), 'revisions increase with each delete');
  assert.equal((await request(reader, 'GET', path)).json.items.length, 0);
}
