import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { runBuiltCli } from './support/cli-process.js';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { legacyEvent, request } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { startMirror, stopMirror } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { POSTGRES_URL, testSchemas } from './support/postgres.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { until } from './support/wait.js';

/**
 * One archive for a fleet: three real kube-apiservers, each with its own etcd,
 * mirrored by three `kevents mirror` processes (each with the read-only token)
 * into one PostgreSQL schema. Every event of each lands once, under its
 * cluster's name and kube-system UID; a fourth mirror that names another
 * apiserver with a name already bound is refused; kubectl and kevents read one
 * cluster's events back through `kevents serve` over that archive; per-cluster
 * retention removes one cluster's events and occurrences only.
 */

const CLUSTERS = ['east', 'west', 'north'] as const;
const PER_CLUSTER = 40;
/** NS holds the test's events: a namespace of its own, where a kube-apiserver writes no events of its own (it may in default). */
const NS = 'fleet';
const kubectl = findKubectls().at(-1);
const schemas = testSchemas('kevents_fleet');

interface Member {
  name: string;
  cp: ControlPlane;
  uid: string;
  mirror?: MirrorProcess;
}

void describe('a fleet of three kube-apiservers in one PostgreSQL archive', { timeout: 600_000 }, () => {
  const members: Member[] = [];
  const schema = schemas.fresh();
  const archive = `${POSTGRES_URL}?schema=${schema}`;
  let server: ServerProcess | undefined;

  before(async () => {
    for (const name of CLUSTERS) {
      const cp = await startControlPlane();
      const ns = await cp.request('GET', '/api/v1/namespaces/kube-system');
      assert.equal(ns.status, 200, ns.text);
      members.push({ name, cp, uid: ns.json.metadata.uid as string });
    }
    for (const m of members) {
      const created = await m.cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      assert.equal(created.status, 201, created.text);
      for (let i = 0; i < PER_CLUSTER; i++) {
        // The same names in every cluster: the archive keeps them apart by cluster, not by name.
        const body = legacyEvent({ name: `web-${i}.${m.name}`, namespace: NS, object: `web-${i}`, reason: 'BackOff', message: `in ${m.name}`, type: 'Warning', firstAgo: 60, lastAgo: 30 });
        const r = await m.cp.request('POST', `/api/v1/namespaces/${NS}/events`, body);
        assert.equal(r.status, 201, r.text);
      }
    }
  });

  after(async () => {
    for (const m of members) if (m.mirror !== undefined) await stopMirror(m.mirror, 'SIGTERM');
    await server?.stop();
    for (const m of members) await m.cp.stop();
  });

  void it('archives every event of each cluster once, under its name and kube-system UID', async () => {
    const uids = new Set(members.map((m) => m.uid));
    assert.equal(uids.size, CLUSTERS.length, 'each apiserver has its own kube-system UID');
    for (const m of members) {
      m.mirror = await startMirror({ kubeconfig: m.cp.kubeconfigFile(m.cp.readToken) }, archive, ['--cluster', m.name]);
    }
    const { rows } = await schemas.admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.clusters`);
    assert.equal(Number(rows[0]!.n), CLUSTERS.length);
    server = await startServer(['--storage', archive]);
    const base = server.url;
    let items: { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; message: string }[] = [];
    await until(
      'the archive holds every event of the three clusters',
      async () => {
        const r = await request(base, 'GET', `/api/v1/namespaces/${NS}/events`);
        items = r.json.items ?? [];
        return items.length >= CLUSTERS.length * PER_CLUSTER;
      },
      120_000,
    );
    assert.equal(items.length, CLUSTERS.length * PER_CLUSTER, 'nothing archived twice');
    for (const m of members) {
      const mine = items.filter((e) => e.metadata.labels?.['archive.kevents.io/cluster'] === m.name);
      assert.equal(mine.length, PER_CLUSTER, m.name);
      for (const e of mine) {
        assert.equal(e.metadata.annotations?.['archive.kevents.io/cluster-uid'], m.uid, e.metadata.name);
        assert.equal(e.message, `in ${m.name}`, e.metadata.name);
        assert.ok(e.metadata.name.endsWith(`.${m.name}`), e.metadata.name);
      }
      const occ = await request(base, 'GET', `/apis/archive.kevents.io/v1alpha1/namespaces/${NS}/occurrences?fieldSelector=cluster%3D${m.name}`);
      assert.equal(occ.status, 200, occ.text);
      assert.equal(occ.json.items.length, PER_CLUSTER, `${m.name}: one occurrence per event`);
      for (const o of occ.json.items as { clusterUID?: string }[]) assert.equal(o.clusterUID, m.uid);
    }
  });

  void it('refuses a mirror of another apiserver under a name already bound, with one line', async () => {
    const [east, west] = members;
    const child = spawn(
      process.execPath,
      [CLI, 'mirror', '--kubeconfig', west!.cp.kubeconfigFile(west!.cp.readToken), '--to', archive, '--cluster', east!.name, '--listen', '127.0.0.1:0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 1, stderr);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, new RegExp(`cluster name "east" is bound to another cluster in this archive \\(kube-system UID ${east!.uid}, this source's is ${west!.uid}\\)`));
    const { rows } = await schemas.admin.query<{ uid: string }>(`SELECT uid FROM ${schema}.clusters WHERE name = 'east'`);
    assert.deepEqual(rows, [{ uid: east!.uid }], 'the binding is unchanged');
  });

  void it('kubectl get events with the kevents.io/cluster field selector gives each cluster its own events only', { skip: kubectl === undefined ? 'no kubectl' : false }, async () => {
    for (const m of members) {
      const r = await runKubectl(kubectl!, server!.url, ['get', 'events', '-n', NS, '--field-selector', `kevents.io/cluster=${m.name}`, '-o', 'name']);
      assert.equal(r.code, 0, r.stderr);
      const names = r.stdout.trim().split('\n').sort();
      assert.equal(names.length, PER_CLUSTER, `${m.name}: ${r.stdout}`);
      for (const n of names) assert.ok(n.endsWith(`.${m.name}`), `${m.name}: ${n}`);
    }
  });

  void it('kevents get events --cluster shows a CLUSTER column only when the answer spans several clusters', async () => {
    const one = await runBuiltCli(['get', 'events', '--server', server!.url, '-n', NS, '--cluster', 'west']);
    assert.equal(one.code, 0, one.stderr);
    const oneLines = one.stdout.trim().split('\n');
    assert.match(oneLines[0]!, /^LAST SEEN/);
    assert.equal(oneLines.length, PER_CLUSTER + 1);
    const two = await runBuiltCli(['get', 'events', '--server', server!.url, '-n', NS, '--cluster', 'west', '--cluster', 'north']);
    assert.equal(two.code, 0, two.stderr);
    const twoLines = two.stdout.trim().split('\n');
    assert.match(twoLines[0]!, /^CLUSTER +LAST SEEN/);
    assert.equal(twoLines.length, 2 * PER_CLUSTER + 1);
    assert.deepEqual([...new Set(twoLines.slice(1).map((l) => l.split(/\s+/)[0]))].sort(), ['north', 'west']);
  });

  // Last: it removes what the tests above read.
  void it('per-cluster retention removes only its cluster; the default spares a cluster with its own', async () => {
    const held = async (): Promise<Record<string, { events: number; occurrences: number }>> => {
      const out: Record<string, { events: number; occurrences: number }> = {};
      for (const m of members) {
        const ev = await request(server!.url, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=kevents.io%2Fcluster%3D${m.name}`);
        const occ = await request(server!.url, 'GET', `/apis/archive.kevents.io/v1alpha1/namespaces/${NS}/occurrences?fieldSelector=cluster%3D${m.name}`);
        assert.equal(ev.status, 200, ev.text);
        assert.equal(occ.status, 200, occ.text);
        out[m.name] = { events: (ev.json.items as unknown[]).length, occurrences: (occ.json.items as unknown[]).length };
      }
      return out;
    };
    const full = { events: PER_CLUSTER, occurrences: PER_CLUSTER };
    const none = { events: 0, occurrences: 0 };
    assert.deepEqual(await held(), { east: full, west: full, north: full });
    // Retention runs once as a server starts, then every minute: each server below runs it once.
    const westOnly = await startServer(['--storage', archive, '--retention', 'west=1s']);
    try {
      await until('west is emptied', async () => (await held()).west!.events + (await held()).west!.occurrences === 0, 60_000);
      assert.deepEqual(await held(), { east: full, west: none, north: full });
    } finally {
      await westOnly.stop();
    }
    const allButEast = await startServer(['--storage', archive, '--retention', '1s', '--retention', 'east=30d']);
    try {
      await until('north is emptied', async () => (await held()).north!.events + (await held()).north!.occurrences === 0, 60_000);
      assert.deepEqual(await held(), { east: full, west: none, north: none });
    } finally {
      await allButEast.stop();
    }
  });
});
