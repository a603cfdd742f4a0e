import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Timeline } from '../src/timeline/index.js';
import { isoSecondsAgo, request } from './support/http.js';
import { runBuiltCli as cli } from './support/cli-process.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

async function timelineJson(server: string, args: string[]): Promise<Timeline> {
  const r = await cli(['timeline', ...args, '-o', 'json', '--server', server]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Timeline;
}

/**
 * The user report of the issue, as a new user meets it: an event the archive
 * first sees already counted (created with count 14, first seen 40 minutes
 * ago, last seen 2 minutes ago).
 */
describe('an event the archive first saw already counted', () => {
  let srv: ServerProcess;
  const now = Date.now();
  const first = isoSecondsAgo(40 * 60, now);
  const last = isoSecondsAgo(2 * 60, now);
  before(async () => {
    srv = await startServer(['--event-ttl', '0']);
    const r = await request(srv.url, 'POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'web-1.counted' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', apiVersion: 'v1' },
      reason: 'BackOff',
      message: 'Back-off restarting failed container web in pod web-1_default(uid-web-1)',
      type: 'Warning',
      source: { component: 'kubelet', host: 'node-1' },
      count: 14,
      firstTimestamp: first,
      lastTimestamp: last,
    });
    assert.equal(r.status, 201, r.text);
  });
  after(async () => {
    await srv.stop();
  });

  it('starts at its first time: the summary names when the problem began', async () => {
    const t = await timelineJson(srv.url, ['--for', 'pod/web-1']);
    assert.equal(t.summary.history, 'occurrences');
    assert.equal(t.summary.firstWarning?.time, first);
    assert.equal(t.summary.window.since, first);
    assert.equal(t.summary.window.until, last);
    assert.equal(t.rows[0]!.time, first);
    assert.equal(t.rows[0]!.estimated, false);
    assert.equal(t.rows.at(-1)!.time, last);
    assert.equal(t.rows.at(-1)!.estimated, false);
  });

  it('accounts for all 14 occurrences, the 12 between the two known times estimated', async () => {
    const t = await timelineJson(srv.url, ['--for', 'pod/web-1']);
    assert.equal(t.summary.occurrences, 14);
    assert.equal(t.rows.reduce((n, r) => n + r.count, 0), 14);
    const between = t.rows.slice(1, -1);
    assert.ok(between.length > 0 && between.every((r) => r.estimated), JSON.stringify(t.rows, null, 2));
    assert.equal(between.reduce((n, r) => n + r.count, 0), 12);
    for (const r of between) assert.ok(r.time > first && r.time < last, `${r.time} lies between ${first} and ${last}`);
  });

  it('folds the run of its 14 repeats into one table row, from the first time, over their spread', async () => {
    const r = await cli(['timeline', '--for', 'pod/web-1', '--server', srv.url]);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.split('\n').filter((l) => / Warning +BackOff /.test(l));
    assert.equal(rows.length, 1, r.stdout);
    assert.match(rows[0]!, new RegExp(`^${first} +Warning +BackOff +Pod/web-1 +x14 over 38m +Back-off restarting failed container web`));
    assert.match(r.stdout, /repeats of one event folded into one row \(--expand shows each\)/);
  });

  it('marks the estimated rows in the expanded table, never printing them as known times', async () => {
    const r = await cli(['timeline', '--for', 'pod/web-1', '--expand', '--server', srv.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^First Warning: ${first} Pod/web-1 BackOff`, 'm'));
    const rows = r.stdout.split('\n').filter((l) => / Warning +BackOff /.test(l));
    assert.equal(rows.length, 2 + 12);
    assert.match(rows[0]!, new RegExp(`^${first} `));
    assert.match(rows.at(-1)!, new RegExp(`^${last} `));
    for (const row of rows.slice(1, -1)) assert.match(row, /^~/);
  });

  it('serves the web UI the very timeline the CLI prints', async () => {
    const served = await request(srv.url, 'GET', '/apis/archive.kevents.io/v1alpha1/namespaces/default/timeline?for=pod/web-1');
    assert.equal(served.status, 200, served.text);
    assert.deepEqual(served.json, await timelineJson(srv.url, ['--for', 'pod/web-1']));
    const all = await request(srv.url, 'GET', `/apis/archive.kevents.io/v1alpha1/timeline?since=${encodeURIComponent(first)}&until=${encodeURIComponent(isoSecondsAgo(0, now + 1000))}`);
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.json, await timelineJson(srv.url, ['-A', '--since-time', first, '--until', isoSecondsAgo(0, now + 1000)]));
  });
});
