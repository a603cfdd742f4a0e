import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { comparable, diffValues, runCase } from './support/differential.js';
import type { Target } from './support/differential.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { CASES } from './differential-cases.js';
import { KNOWN_DIFFERENCES } from './differential-known.js';

/**
 * The differential suite: every case of differential-cases.ts is sent to the real kube-apiserver and
 * to `kevents serve`, and the answers must be equal once normalised (ids, resourceVersion values,
 * server times, ages, generated names). A case that differs fails unless KNOWN_DIFFERENCES lists it
 * with its reason, and every listed difference is in docs/compatibility.md.
 * Three kevents servers answer every case: one on the memory store, one on a SQLite file with
 * `--workers 2` (followers reading the file, and the render cache lists are spliced from), and one
 * on a SQLite file with `--writer-thread` (writes committed on a thread of their own);
 * each must match kube-apiserver.
 * KEVENTS_DIFF_REPORT=FILE writes every case's comparison to FILE.
 */
describe('differential: kevents serve answers as kube-apiserver does', { concurrency: false }, () => {
  let cp: ControlPlane;
  let server: ServerProcess;
  let filed: ServerProcess;
  let threaded: ServerProcess;
  let real: Target;
  let ours: Target;
  let oursFiled: Target;
  let oursThreaded: Target;
  const report: string[] = [];
  const tally = { cases: 0, identical: 0, documented: 0 };

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-differential-'));
    [cp, server, filed, threaded] = await Promise.all([
      startControlPlane({ extraArgs: ['--feature-gates=WatchList=true'] }),
      startServer(['--storage', 'memory:', '--event-ttl', '1h']),
      startServer(['--storage', `sqlite:${join(dir, 'events.db')}`, '--workers', '2', '--event-ttl', '1h']),
      startServer(['--storage', `sqlite:${join(dir, 'threaded.db')}`, '--writer-thread', '--event-ttl', '1h']),
    ]);
    real = { name: 'kube-apiserver', url: cp.url, ca: readFileSync(cp.caFile), token: cp.adminToken };
    ours = { name: 'kevents', url: server.url };
    oursFiled = { name: 'kevents (SQLite, --workers 2)', url: filed.url };
    oursThreaded = { name: 'kevents (SQLite, --writer-thread)', url: threaded.url };
  });
  after(async () => {
    await Promise.all([cp?.stop(), server?.stop(), filed?.stop(), threaded?.stop()]);
    const path = process.env.KEVENTS_DIFF_REPORT;
    if (path) writeFileSync(path, `${JSON.stringify(tally)}\n\n${report.join('\n')}\n`);
  });

  for (const [i, c] of CASES.entries()) {
    it(`${c.id}: ${c.title}`, async () => {
      const ns = `d${i}-${c.id.slice(0, 40).replace(/[^a-z0-9-]/g, '-').replace(/-+$/, '')}`;
      for (const name of [ns, `${ns}-b`]) {
        const r = await cp.request('POST', '/api/v1/namespaces', { metadata: { name } });
        assert.ok(r.status === 201 || r.status === 409, r.text);
      }
      const targets = [ours, oursFiled, oursThreaded];
      const [a, ...theirs] = await Promise.all([runCase(real, c, ns), ...targets.map((t) => runCase(t, c, ns))]);
      const diffs: string[] = [];
      const full: string[] = [];
      for (const [k, b] of theirs.entries()) {
        const who = k === 0 ? '' : `${targets[k]!.name}: `;
        for (const [j, { step, answer }] of a.entries()) {
          if (step.compare === false) continue;
          const [x, y] = [comparable(answer, ns, step.select, step.yaml), comparable(b[j]!.answer, ns, step.select, step.yaml)];
          const d = diffValues(x, y);
          for (const line of d) diffs.push(`${who}step ${j} ${step.method} ${step.path}: ${line}`);
          if (d.length > 0) full.push(`kube-apiserver: ${JSON.stringify(x)}\n${who || 'kevents:'}        ${JSON.stringify(y)}`);
        }
      }
      tally.cases++;
      const known = KNOWN_DIFFERENCES[c.id];
      report.push(`## ${c.id}: ${diffs.length === 0 ? 'identical' : known ? `documented (${known})` : 'DIFFERENT'}\n${diffs.join('\n')}${full.length > 0 ? `\n${full.join('\n')}` : ''}`);
      if (diffs.length === 0) {
        tally.identical++;
        assert.equal(known, undefined, `${c.id} is listed as a known difference but the answers are the same now: remove it`);
        return;
      }
      if (known !== undefined) {
        tally.documented++;
        return;
      }
      assert.fail(`kevents answers differently from kube-apiserver:\n${diffs.join('\n')}`);
    });
  }

  it('lists every known difference in docs/compatibility.md', () => {
    const doc = readFileSync(new URL('../docs/compatibility.md', import.meta.url), 'utf8');
    for (const id of Object.keys(KNOWN_DIFFERENCES)) {
      assert.ok(CASES.some((c) => c.id === id), `known difference ${id} names no case`);
      assert.ok(doc.includes(`\`${id}\``), `docs/compatibility.md does not explain ${id}`);
    }
  });
});
