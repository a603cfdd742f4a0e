import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { escapeTerminalLine } from '../src/api/index.js';
import type { Incident, IncidentList, IncidentObjectList } from '../src/api/index.js';
import { request } from './support/http.js';
import { runBuiltCli } from './support/cli-process.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { HOSTILE_MESSAGE, HOSTILE_POD, LAB_INCIDENTS, seedLabFailures } from './ui-incidents-seed.js';
import type { LabIncident } from './ui-incidents-seed.js';
import { ARTIFACTS, launchChromium, openPage, shoot, until } from './ui-scenario.js';

const BUILT_UI = fileURLToPath(new URL('../dist/ui/index.html', import.meta.url));
const HOUR_MS = 3_600_000;

/** items are the rows of the Incidents view. */
const items = (page: Page): Locator => page.locator('#incident-list > li');

/**
 * clock is a time as the page's one clock format shows it, computed in the browser (its locale and zone): the
 * wall-clock time, with the date before it when that is not the browser's today (a run across midnight).
 */
function clock(page: Page, time: string): Promise<string> {
  return page.evaluate<string>(
    `(() => { const d = new Date(${JSON.stringify(time)}); const t = d.toLocaleTimeString(undefined, { hour12: false }); return new Date().toDateString() === d.toDateString() ? t : d.toLocaleDateString() + ' ' + t; })()`,
  );
}

/** rowOf is the view's row of a seeded incident: its kind and its root's namespace tell it apart. */
function rowOf(page: Page, want: Pick<LabIncident, 'kind' | 'namespace'>): Locator {
  return page.locator(`#incident-list > li[data-kind="${want.kind}"]`).filter({ has: page.locator('.inc-ns', { hasText: want.namespace }) });
}

describe('web UI Incidents view over the lab\'s failures, in headless Chromium', () => {
  let srv: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  /** served is the incidents route's answer for the landing page's window, read as a client reads it. */
  let served: Incident[];

  before(async () => {
    assert.ok(existsSync(BUILT_UI), `${BUILT_UI} is missing: run "npm run build"`);
    mkdirSync(ARTIFACTS, { recursive: true });
    srv = await startServer(['--event-ttl', '0']);
    await seedLabFailures(srv.url);
    const r = await request(srv.url, 'GET', `/apis/archive.kevents.io/v1alpha1/incidents?since=${new Date(Date.now() - HOUR_MS).toISOString()}`);
    assert.equal(r.status, 200, r.text);
    served = (r.json as IncidentObjectList).items.map((i) => i.status);
    // Each seeded failure is one incident of its kind, so the view's rows can be checked one by one.
    for (const want of LAB_INCIDENTS) {
      const found = served.filter((i) => i.kind === want.kind && i.namespace === want.namespace);
      assert.equal(found.length, 1, `${want.kind} in ${want.namespace}: ${JSON.stringify(served.map((i) => [i.kind, i.namespace, i.root]))}`);
      assert.equal(found[0]!.root, want.root);
      assert.match(found[0]!.cause, want.cause);
    }
    assert.equal(served.length, LAB_INCIDENTS.length);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  it('lands on the Incidents view: one row per incident, most recent first, its status, start, root, cause, count and next steps as the server gives them', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/`);
    await until(page, `document.querySelectorAll('#incident-list > li').length === ${served.length}`);
    assert.equal(new URL(page.url()).hash, '#/incidents');
    assert.equal(await page.getByRole('navigation', { name: 'Views' }).locator('[aria-current=page]').textContent(), 'Incidents');
    await page.locator('.incidents .count', { hasText: `${served.length} incidents in the last 1h · ${served.filter((i) => i.ongoing).length} ongoing` }).waitFor();

    // The rows are the served incidents, in the served order, each sentence as the server wrote it, a root's controls shown as `kevents incidents` shows them.
    assert.deepEqual(await items(page).locator('.inc-root a').allTextContents(), served.map((i) => escapeTerminalLine(i.root)));
    assert.deepEqual(await items(page).locator('.inc-cause').allTextContents(), served.map((i) => i.cause));
    assert.deepEqual(await items(page).locator('.inc-ns').allTextContents(), served.map((i) => i.namespace));
    assert.deepEqual(await items(page).locator('.inc-status').allTextContents(), served.map((i) => (i.ongoing ? 'ongoing' : 'stopped')));
    assert.deepEqual(await items(page).locator('.inc-count').allTextContents(), served.map((i) => `×${i.occurrences}`));

    for (const want of LAB_INCIDENTS) {
      const incident = served.find((i) => i.kind === want.kind && i.namespace === want.namespace)!;
      const row = rowOf(page, want);
      assert.equal(await row.count(), 1, `${want.kind} in ${want.namespace}`);
      assert.equal(await row.locator('.inc-root a').textContent(), escapeTerminalLine(want.root));
      assert.match((await row.locator('.inc-cause').textContent()) ?? '', want.cause);
      // The start: the served time, in the one clock format of the UI; an estimate marked and bounded as served.
      const time = row.locator('.inc-since time');
      assert.equal(await time.getAttribute('datetime'), incident.start.time);
      const shown = (await time.textContent()) ?? '';
      if (incident.start.estimated) {
        assert.match(shown, /^~(\S+ )?\d\d:\d\d:\d\d$/, want.kind);
        assert.equal(shown, `~${await clock(page, incident.start.time)}`, want.kind);
        const bound = incident.start.latest!;
        assert.equal(incident.start.earliest, null, 'the seed\'s estimate has no lower bound');
        assert.equal(await row.locator('.inc-bounds').textContent(), `estimated: before ${await clock(page, bound)}`);
      } else {
        assert.match(shown, /^(\S+ )?\d\d:\d\d:\d\d$/, want.kind);
        assert.equal(shown, await clock(page, incident.start.time), want.kind);
        assert.equal(await row.locator('.inc-bounds').count(), 0);
      }
      // Next steps as the server quoted them, each with its Copy button.
      assert.deepEqual(await row.locator('.inc-hints code').allTextContents(), incident.hints.map((h) => h.command));
      assert.equal(await row.locator('.inc-hints button.copy').count(), incident.hints.length);
    }
    assert.ok(served.some((i) => i.start.estimated), 'the seed holds an estimated start');
    await shoot(page, 'ui-incidents');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('shows the rows kevents incidents prints for the same window, from the request that command sends', async () => {
    const { page, seen } = await openPage(context);
    const asked = page.waitForRequest((r) => new URL(r.url()).pathname.endsWith('/incidents'));
    await page.goto(`${srv.url}/#/incidents`);
    await until(page, `document.querySelectorAll('#incident-list > li').length === ${served.length}`);
    const cli = await runBuiltCli(['incidents', '-A', '--since', '1h', '-o', 'json', '--server', srv.url]);
    assert.equal(cli.code, 0, cli.stderr);
    const printed = (JSON.parse(cli.stdout) as IncidentList).incidents;
    // The same parameters: a window's start to the millisecond, and nothing else (the look-back and clusters at their defaults).
    const params = new URL((await asked).url()).searchParams;
    assert.deepEqual([...params.keys()], ['since']);
    assert.match(params.get('since')!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(await items(page).locator('.inc-root a').allTextContents(), printed.map((i) => escapeTerminalLine(i.root)));
    assert.deepEqual(await items(page).locator('.inc-cause').allTextContents(), printed.map((i) => i.cause));
    assert.deepEqual(await items(page).locator('.inc-count').allTextContents(), printed.map((i) => `×${i.occurrences}`));
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('shows a hostile pod name and message as text: markup and quotes run nothing and stay as written, a name\'s newline shown as ^J', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/incidents?ns=default`);
    await until(page, `document.querySelectorAll('#incident-list > li').length === 1`);
    const incident = served.find((i) => i.kind === 'other')!;
    const row = rowOf(page, { kind: 'other', namespace: 'default' });
    assert.equal(await row.locator('.inc-root a').textContent(), `Pod/${HOSTILE_POD.replace('\n', '^J')}`);
    assert.equal(await row.locator('.inc-cause').textContent(), incident.cause);
    assert.ok(incident.cause.includes('<script>alert(1)</script>'), incident.cause);
    // The server refused the name in the command and said why; both are text.
    assert.deepEqual(await row.locator('.inc-hints code').allTextContents(), ['kubectl describe Pod <name> -n default']);
    assert.match((await row.locator('.inc-hints li').textContent()) ?? '', /holds control, newline or invisible characters/);
    assert.equal(await page.locator('#app script, #app img').count(), 0, 'no element was parsed out of the name or the message');

    // Its timeline opens too: the panel names the pod and lists the message as text.
    await row.locator('.inc-root a').click();
    const panel = page.getByRole('dialog', { name: /Pod\/evil<script>/ });
    await panel.locator('table.incident-rows td.message', { hasText: 'second line' }).waitFor();
    assert.equal(await panel.locator('table.incident-rows td.message').first().textContent(), HOSTILE_MESSAGE);
    assert.equal(await page.locator('#app script, #app img').count(), 0);
    await page.evaluate('new Promise((r) => setTimeout(r, 200))');
    await shoot(page, 'ui-incidents-hostile');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('opens an incident\'s timeline: its namespace around its start, the root in the object panel with its events and cause', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/incidents`);
    for (const want of LAB_INCIDENTS.filter((i) => i.kind === 'create-forbidden-quota' || i.kind === 'image-not-found')) {
      const incident = served.find((i) => i.kind === want.kind && i.namespace === want.namespace)!;
      const name = want.root.slice(want.root.indexOf('/') + 1);
      await rowOf(page, want).locator('.inc-root a').click();

      // The route is a link to share: the timeline of the root's namespace, from before the start, the root open.
      const hash = new URL(page.url()).hash;
      assert.match(hash, /^#\/timeline\?/);
      const params = new URLSearchParams(hash.slice(hash.indexOf('?') + 1));
      assert.equal(params.get('ns'), want.namespace);
      assert.equal(params.get('object'), `Deployment/${want.namespace}/${name}`);
      assert.ok(Date.parse(params.get('from')!) <= Date.parse(incident.start.time) - 5 * 60_000, `${params.get('from')} is before ${incident.start.time}`);
      assert.equal(params.get('to'), null, 'an ongoing incident\'s timeline follows now');

      // Two Deployments named web: the panel is the one of the incident's namespace, with its incident's rows and cause.
      const panel = page.getByRole('dialog', { name: new RegExp(`^Deployment/${name} in ${want.namespace}`) });
      await panel.locator('table.incident-rows td.message', { hasText: want.rootEvent }).first().waitFor();
      await panel.locator('.incident-cause', { hasText: incident.cause }).waitFor();
      const objects = new Set(await panel.locator('table.incident-rows tbody td:nth-child(2)').allTextContents());
      for (const o of incident.objects) assert.ok(objects.has(o), `${o} in ${[...objects].join(', ')}`);
      // The timeline behind it draws the namespace's lanes, the root's among them, no other namespace's.
      await page.locator('#timeline-list [role=option]', { hasText: `Deployment ${name}` }).waitFor();
      assert.deepEqual(new Set(await page.locator('#timeline-list .lane-ns').allTextContents()), new Set([want.namespace]));
      await shoot(page, `ui-incidents-open-${want.kind}`);

      await page.goBack();
      await until(page, `document.querySelectorAll('#incident-list > li').length === ${served.length}`);
    }
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('narrows by the filter bar and the window, kept in the URL', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/incidents`);
    await until(page, `document.querySelectorAll('#incident-list > li').length === ${served.length}`);
    await page.getByLabel('Namespace', { exact: true }).fill('batch');
    await until(page, `document.querySelectorAll('#incident-list > li').length === 1`);
    assert.deepEqual(await items(page).locator('.inc-root a').allTextContents(), ['Job/report-28731']);
    assert.match(page.url(), /#\/incidents\?ns=batch/);

    await page.getByLabel('Namespace', { exact: true }).fill('');
    await page.getByLabel('Kind').fill('ReplicaSet');
    await until(page, `document.querySelectorAll('#incident-list > li').length === 1`);
    assert.deepEqual(await items(page).locator('.inc-ns').allTextContents(), ['quota']);
    await page.getByRole('button', { name: 'Clear' }).click();

    await page.getByRole('button', { name: '6h' }).click();
    assert.match(page.url(), /#\/incidents\?window=6h/);
    await page.locator('.incidents .count', { hasText: `${served.length} incidents in the last 6h` }).waitFor();
    // A pasted link opens the same narrowed view.
    await page.goto(`${srv.url}/#/incidents?kind=Job&window=24h`);
    await page.reload();
    await until(page, `document.querySelectorAll('#incident-list > li').length === 1`);
    assert.deepEqual(await items(page).locator('.inc-root a').allTextContents(), ['Job/report-28731']);
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });
});
