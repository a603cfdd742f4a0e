import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from './support/http.js';
import { POSTGRES_URL, testSchemas } from './support/postgres.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * Bounded answers (docs/serve.md): events whose message is a quarter of a MiB,
 * each patched many times as a kubelet bumps a repeating event's count, read
 * through every archive route and both event lists of a real `kevents serve`
 * with `--max-answer-bytes 1MiB`, over SQLite and PostgreSQL. Each answer is a
 * 200 within its bound, and paging reaches every hit and every occurrence, each
 * once, with its whole text once the answer's references are resolved.
 */

const ARCHIVE = '/apis/archive.kevents.io/v1alpha1';
const NS = 'amp';
const BOUND = 1024 * 1024;
const MESSAGE_BYTES = 256 * 1024;
/** REPEATED events keep their text through PATCHES count bumps; one more event gets a new text with each. */
const REPEATED = 4;
const PATCHES = 20;
const { fresh } = testSchemas('kevents_bounded');

const text = (seed: string): string => `boom ${seed} `.padEnd(MESSAGE_BYTES, 'the container exited while pulling the image ');
const at = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const bytes = (s: string): number => Buffer.byteLength(s);

/** expected is what each event's versions say: its message after each write, oldest first. */
const expected = new Map<string, string[]>();

async function fill(url: string): Promise<void> {
  const t0 = Date.now() - 30 * 60_000;
  for (let e = 1; e <= REPEATED + 1; e++) {
    const name = `amp-${e}.boom`;
    const changing = e > REPEATED;
    const messages = [text(changing ? `${e}-0` : `${e}`)];
    const created = await request(url, 'POST', `/api/v1/namespaces/${NS}/events`, {
      metadata: { name, namespace: NS },
      involvedObject: { kind: 'Pod', namespace: NS, name: `amp-${e}`, uid: `00000000-0000-4000-8000-00000000000${e}`, apiVersion: 'v1' },
      reason: 'BackOff',
      type: 'Warning',
      message: messages[0],
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: at(t0),
      lastTimestamp: at(t0),
      count: 1,
    });
    assert.equal(created.status, 201, created.text.slice(0, 300));
    for (let r = 1; r <= PATCHES; r++) {
      const patch: Record<string, unknown> = { count: r + 1, lastTimestamp: at(t0 + r * 30_000) };
      if (changing) patch.message = text(`${e}-${r}`);
      messages.push(changing ? (patch.message as string) : messages[0]!);
      const p = await request(url, 'PATCH', `/api/v1/namespaces/${NS}/events/${name}`, patch, { 'Content-Type': 'application/strategic-merge-patch+json' });
      assert.equal(p.status, 200, p.text.slice(0, 300));
    }
    expected.set(name, messages);
  }
}

/** pages reads every page of `path` (a list with continue tokens), checking each is a 200 within the bound. */
async function pages(url: string, path: string, accept?: string): Promise<any[]> {
  const out: any[] = [];
  let token: string | undefined;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await request(url, 'GET', `${path}${token !== undefined ? `${sep}continue=${encodeURIComponent(token)}` : ''}`, undefined, accept !== undefined ? { Accept: accept } : {});
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.ok(bytes(r.text) <= BOUND, `${path}: ${bytes(r.text)} bytes`);
    out.push(r.json);
    token = r.json.metadata?.continue;
  } while (token !== undefined && out.length < 200);
  return out;
}

/** resolved gives each occurrence of one answer its text back, as clients do (src/api/answer-text.ts), by hand. */
function resolved(items: any[], seed?: { rv: string; message: string }): any[] {
  const texts = new Map<string, string>();
  if (seed !== undefined) texts.set(seed.rv, seed.message);
  return items.map((o) => {
    const message = o.messageOf !== undefined ? (texts.get(`${o.event.name}@${o.messageOf}`) ?? (seed !== undefined && seed.rv === o.messageOf ? seed.message : undefined)) : o.message;
    if (message !== undefined) texts.set(`${o.event.name}@${o.event.resourceVersion}`, message);
    return { ...o, message };
  });
}

function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  void describe(`bounded answers over ${backend}`, () => {
    let srv: ServerProcess;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'kevents-bounded-'));
      let storage = `sqlite:${join(dir, 'events.db')}`;
      if (backend === 'postgres') {
        const u = new URL(POSTGRES_URL);
        u.searchParams.set('schema', fresh());
        storage = u.toString();
      }
      srv = await startServer(['--storage', storage, '--event-ttl', '0', '--max-answer-bytes', '1MiB']);
      expected.clear();
      await fill(srv.url);
    });
    after(async () => {
      await srv?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    void it('pages occurrences within the bound, every occurrence once, each text once an answer', async () => {
      const all = (await pages(srv.url, `${ARCHIVE}/namespaces/${NS}/occurrences?limit=500`)).flatMap((p) => resolved(p.items));
      assert.equal(all.length, (REPEATED + 1) * (PATCHES + 1));
      assert.equal(new Set(all.map((o) => o.metadata.name)).size, all.length);
      for (const [name, messages] of expected) {
        const mine = all.filter((o) => o.event.name === name);
        assert.deepEqual(mine.map((o) => o.message), messages, name);
      }
      // As a Table with each occurrence as its object (kubectl get --raw, a UI), bounded and paged the same way.
      const rows = (await pages(srv.url, `${ARCHIVE}/namespaces/${NS}/occurrences?limit=500&includeObject=Object`, 'application/json;as=Table;v=v1;g=meta.k8s.io')).flatMap((p) => p.rows);
      assert.deepEqual(rows.map((r) => r.cells[7]), all.map((o) => o.metadata.name));
      for (const r of rows) assert.ok(bytes(r.cells[5]) < 4096, 'a Message cell is cut');
    });

    void it('a page of one repeated event carries its text once', async () => {
      const r = await request(srv.url, 'GET', `${ARCHIVE}/namespaces/${NS}/occurrences?fieldSelector=${encodeURIComponent('event.name=amp-1.boom')}`);
      assert.equal(r.status, 200);
      assert.equal(r.json.items.length, PATCHES + 1);
      assert.equal(r.json.items.filter((o: any) => o.message !== undefined).length, 1);
      assert.ok(bytes(r.text) < 2 * MESSAGE_BYTES, `${bytes(r.text)} bytes`);
    });

    void it('pages search hits within the bound, each hit once with all its occurrences', async () => {
      const hits = (await pages(srv.url, `${ARCHIVE}/namespaces/${NS}/search?q=boom&limit=50`)).flatMap((p) => p.items);
      assert.deepEqual(hits.map((h) => h.event.metadata.name).sort(), [...expected.keys()].sort());
      for (const h of hits) {
        const name = h.event.metadata.name;
        const occurrences = resolved(h.occurrences, { rv: h.event.metadata.resourceVersion, message: h.event.message });
        const left = h.occurrencesLeftOut ?? 0;
        // A hit too large for one answer keeps its first occurrences and counts the rest, which the occurrences API reads.
        assert.equal(occurrences.length + left, PATCHES + 1, name);
        assert.deepEqual(occurrences.map((o) => o.message), expected.get(name)!.slice(0, occurrences.length), name);
        if (left > 0) {
          const rest = (await pages(srv.url, `${ARCHIVE}/namespaces/${NS}/occurrences?fieldSelector=${encodeURIComponent(`event.name=${name}`)}`)).flatMap((p) => resolved(p.items));
          assert.deepEqual(rest.map((o) => o.message), expected.get(name), name);
        }
      }
      assert.ok(hits.some((h) => (h.occurrencesLeftOut ?? 0) > 0), 'no hit was larger than an answer');
    });

    void it('both event lists and their Tables end short with a continue token and page to every event', async () => {
      for (const path of [`/api/v1/namespaces/${NS}/events`, `/apis/events.k8s.io/v1/namespaces/${NS}/events`]) {
        const list = await pages(srv.url, path);
        assert.ok(list.length > 1, `${path} fit one answer`);
        assert.deepEqual(list.flatMap((p) => p.items.map((e: any) => e.metadata.name)).sort(), [...expected.keys()].sort());
        const table = await pages(srv.url, path, 'application/json;as=Table;v=v1;g=meta.k8s.io');
        assert.deepEqual(table.flatMap((p) => p.rows.map((row: any) => row.object.metadata.name)).sort(), [...expected.keys()].sort());
      }
    });

    void it('kubectl get events follows the pages', () => {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: k, cluster: {server: "${srv.url}"}}]\ncontexts: [{name: k, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: k\n`);
      const out = execFileSync('kubectl', ['--kubeconfig', kubeconfig, 'get', 'events', '-n', NS, '-o', 'name'], { encoding: 'utf8' });
      assert.deepEqual(out.trim().split('\n').sort(), [...expected.keys()].map((n) => `event/${n}`).sort());
    });

    void it('a timeline of a repeated event is its text once, within the bound', async () => {
      const r = await request(srv.url, 'GET', `${ARCHIVE}/namespaces/${NS}/timeline?for=Pod/amp-1&since=${at(Date.now() - 3_600_000)}`);
      assert.equal(r.status, 200, r.text.slice(0, 300));
      assert.ok(bytes(r.text) < 2 * MESSAGE_BYTES, `${bytes(r.text)} bytes`);
      assert.ok(r.json.rows.length > 1);
      for (const row of r.json.rows) {
        const message = row.messageOf !== undefined ? r.json.rows[row.messageOf].message : row.message;
        assert.equal(message, expected.get('amp-1.boom')![0]);
      }
    });

    void it('the incidents answer cuts the evidence texts and stays within the bound', async () => {
      const r = await request(srv.url, 'GET', `${ARCHIVE}/incidents?since=${at(Date.now() - 3_600_000)}`);
      assert.equal(r.status, 200, r.text.slice(0, 300));
      assert.ok(bytes(r.text) <= BOUND, `${bytes(r.text)} bytes`);
      assert.ok(r.json.items.length > 0);
      for (const { status: inc } of r.json.items) {
        for (const row of inc.evidence) if (row.messageOf === undefined) assert.match(row.message, /… \[\d+ more characters\]$/);
      }
    });

    void it('records the server\'s peak RSS after every read', (t) => {
      const peak = peakRssMiB(srv.child.pid!);
      t.diagnostic(`${backend}: the server's peak RSS ${peak.toFixed(0)} MiB`);
      assert.ok(peak > 0);
    });
  });
}
