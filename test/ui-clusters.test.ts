import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import type { IncidentObjectList, Timeline } from '../src/api/index.js';
import { runBuiltCli } from './support/cli-process.js';
import { request } from './support/http.js';
import { foldRuns } from '../src/api/row-runs.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { ARTIFACTS, dashboardTotal, FLEET, launchChromium, openPage, rowCount, rows, rowTexts, seedFleet, shoot, until } from './ui-scenario.js';

const BUILT_UI = fileURLToPath(new URL('../dist/ui/index.html', import.meta.url));

/** eventsOf is how many events a cluster of FLEET has; warningsOf how many warnings they count. */
const eventsOf = (cluster: string): number => FLEET[cluster]!.length;
/** picker is the cluster picker of the filter bar. */
const picker = (page: Page): Locator => page.locator('.filters select[name=cluster]');
const warningsOf = (cluster: string): number => FLEET[cluster]!.filter((e) => e.type === 'Warning').reduce((n, e) => n + (e.count ?? 1), 0);

describe('web UI over an archive of three clusters, in headless Chromium', () => {
  let dir: string;
  let srv: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  const total = Object.keys(FLEET).reduce((n, c) => n + eventsOf(c), 0);

  before(async () => {
    assert.ok(existsSync(BUILT_UI), `${BUILT_UI} is missing: run "npm run build"`);
    mkdirSync(ARTIFACTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'kevents-ui-fleet-'));
    const db = join(dir, 'fleet.db');
    await seedFleet(db);
    srv = await startServer(['--storage', `sqlite:${db}`, '--event-ttl', '0']);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('serves each cluster its own events: the archive kept the same names of two clusters apart', async () => {
    const listed = await request(srv.url, 'GET', '/api/v1/events');
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.json.items.length, total);
    for (const cluster of Object.keys(FLEET)) {
      const one = await request(srv.url, 'GET', `/api/v1/events?labelSelector=${encodeURIComponent(`archive.kevents.io/cluster=${cluster}`)}`);
      assert.equal(one.json.items.length, eventsOf(cluster), cluster);
    }
  });

  it('picks a cluster in the live view: only its events, the pick kept in the URL, the choices those of the archive', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live`);
    await rowCount(page, 'live-list', total);
    // The picker shows once the events of a second cluster are in.
    await picker(page).waitFor();
    assert.deepEqual(await picker(page).locator('option').allTextContents(), ['all', 'prod-eu', 'prod-us', 'staging']);
    // Each row names its cluster, as there are several.
    assert.deepEqual(new Set(await rowTexts(page, 'live-list', '.c-ns .cluster-tag')), new Set(['prod-eu', 'prod-us', 'staging']));

    await picker(page).selectOption('prod-eu');
    await rowCount(page, 'live-list', eventsOf('prod-eu'));
    assert.match(page.url(), /cluster=prod-eu/);
    assert.deepEqual(new Set(await rowTexts(page, 'live-list', '.c-ns .cluster-tag')), new Set(['prod-eu']));
    assert.ok((await rowTexts(page, 'live-list', '.c-object')).includes('pod/web-7d9f-abcde'));
    await page.locator('.live .count', { hasText: `${eventsOf('prod-eu')} of ${total} events` }).waitFor();
    await shoot(page, 'ui-clusters-live');

    await picker(page).selectOption('staging');
    await rowCount(page, 'live-list', eventsOf('staging'));
    assert.deepEqual(await rowTexts(page, 'live-list', '.c-reason'), ['FailedScheduling', 'SuccessfulCreate']);

    // With the other filters, and from a pasted link.
    await page.goto(`${srv.url}/#/live?cluster=prod-us&type=Warning`);
    await page.reload();
    await rowCount(page, 'live-list', 2);
    assert.deepEqual(new Set(await rowTexts(page, 'live-list', '.c-reason')), new Set(['BackOff', 'Unhealthy']));
    assert.equal(await picker(page).inputValue(), 'prod-us');
    await page.getByRole('button', { name: 'Clear' }).click();
    await rowCount(page, 'live-list', total);
    assert.equal(await picker(page).inputValue(), '');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it("counts the picked cluster's warnings on the dashboard, and charts and tallies them by cluster", async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/dashboard`);
    await page.locator('.chart svg rect.bar').first().waitFor();
    const all = Object.keys(FLEET).reduce((n, c) => n + warningsOf(c), 0);
    await until(page, `document.querySelector('.dashboard .count').dataset.total === '${all}'`);
    await page.getByText(/Counts are from the archive's occurrences/).waitFor();
    const byCluster = page.getByRole('table', { name: 'By cluster' });
    assert.deepEqual(await byCluster.locator('tbody tr').allTextContents(), [
      `prod-us${warningsOf('prod-us')}`,
      `prod-eu${warningsOf('prod-eu')}`,
      `staging${warningsOf('staging')}`,
    ]);

    await page.getByLabel('Chart by').selectOption('cluster');
    assert.match(page.url(), /by=cluster/);
    await page.locator('.chart rect.bar[data-group=staging]').first().waitFor();
    assert.deepEqual(new Set(await page.locator('.chart .legend li:not(.legend-note)').allTextContents()), new Set(['prod-eu', 'prod-us', 'staging']));
    await until(page, `[...document.querySelectorAll('.chart rect.bar')].reduce((s, r) => s + Number(r.dataset.count), 0) === ${all}`);
    await shoot(page, 'ui-clusters-dashboard');

    for (const cluster of Object.keys(FLEET)) {
      await picker(page).selectOption(cluster);
      await until(page, `document.querySelector('.dashboard .count').dataset.total === '${warningsOf(cluster)}'`);
      assert.deepEqual(await byCluster.locator('tbody tr').allTextContents(), [`${cluster}${warningsOf(cluster)}`]);
    }
    // The picked cluster's reasons only: staging has FailedScheduling and nothing else.
    assert.deepEqual(await page.getByRole('table', { name: 'By reason' }).locator('tbody tr').allTextContents(), [`FailedScheduling${warningsOf('staging')}`]);
    await shoot(page, 'ui-clusters-dashboard-staging');

    // A cluster's row of the tally picks it.
    await picker(page).selectOption('');
    await byCluster.getByRole('button', { name: 'prod-eu' }).click();
    assert.equal(await picker(page).inputValue(), 'prod-eu');
    await until(page, `document.querySelector('.dashboard .count').dataset.total === '${warningsOf('prod-eu')}'`);
    assert.equal(await dashboardTotal(page), warningsOf('prod-eu'));
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('draws a lane per object of each cluster on the timeline, and the picked cluster only', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/timeline?ns=shop`);
    await rows(page, 'timeline-list').first().waitFor();
    const deployments = page.locator('#timeline-list [role=option]', { hasText: /Deployment\s*web/ });
    await until(page, `document.querySelectorAll('#timeline-list [role=option] .lane-ns .cluster-tag').length > 0`);
    assert.equal(await deployments.count(), 2, 'Deployment shop/web of prod-eu and of prod-us');
    assert.deepEqual(new Set(await deployments.locator('.cluster-tag').allTextContents()), new Set(['prod-eu', 'prod-us']));
    await picker(page).selectOption('prod-us');
    await rowCount(page, 'timeline-list', 4);
    assert.deepEqual(new Set(await rowTexts(page, 'timeline-list', '.cluster-tag')), new Set(['prod-us']));
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it("opens Deployment/web of the picked cluster as its incident: its Pod's warnings and the image pull next steps, as kevents timeline --cluster prints them", async () => {
    const cli = await runBuiltCli(['timeline', '--for', 'deployment/web', '-n', 'shop', '--cluster', 'prod-eu', '--since', '30d', '-o', 'json', '--server', srv.url]);
    assert.equal(cli.code, 0, cli.stderr);
    const want = JSON.parse(cli.stdout) as Timeline;
    assert.ok(want.rows.length > 0 && want.rows.every((r) => r.cluster === 'prod-eu'), 'the CLI reads prod-eu alone');

    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live?cluster=prod-eu`);
    await rowCount(page, 'live-list', eventsOf('prod-eu'));
    await page.locator('#live-list [role=option]', { hasText: 'ScalingReplicaSet' }).click();
    assert.match(page.url(), /object=Deployment%2Fshop%2Fweb/);
    const panel = page.getByRole('dialog', { name: /Deployment\/web/ });
    await panel.getByText('of prod-eu').waitFor();
    const incident = panel.locator('table.incident-rows tbody tr');
    await incident.first().waitFor();
    // Its own event only, prod-eu's (prod-us scaled another ReplicaSet).
    assert.deepEqual(await panel.locator('table.describe:not(.incident-rows) td.message').allTextContents(), ['Scaled up replica set web-7d9f to 1']);
    // One row per run of one event's repeats, as the CLI's table folds them.
    const runs = foldRuns(want.rows);
    assert.equal(await incident.count(), runs.length);
    const objects = await panel.locator('table.incident-rows tbody td:nth-child(2)').allTextContents();
    assert.deepEqual(objects, runs.map((r) => r.first.object));
    assert.ok(objects.includes('Pod/web-7d9f-abcde') && !objects.includes('Pod/web-5b8c-q2w3e'), objects.join('|'));
    assert.ok((await panel.locator('table.incident-rows tr.warning').count()) > 0, "the pod's warnings are in the incident");
    await panel.getByText(/First warning: .*(Failed|ErrImagePull) on Pod\/web-7d9f-abcde/).waitFor();
    const commands = await panel.locator('.hints code').allTextContents();
    assert.deepEqual(commands, want.hints.map((h) => h.command));
    assert.ok(commands.includes("kubectl get pod web-7d9f-abcde -n shop -o 'jsonpath={.spec.containers[*].image}'"), commands.join('\n'));
    assert.equal(await panel.getByText('No specific steps').count(), 0);
    await shoot(page, 'ui-clusters-deployment');

    // With no cluster picked, both clusters' Deployment/web are one incident, each row naming its cluster.
    await picker(page).selectOption('');
    await panel.locator('table.incident-rows th', { hasText: 'Cluster' }).waitFor();
    const clusters = await panel.locator('table.incident-rows tbody td:nth-child(2)').allTextContents();
    assert.deepEqual(new Set(clusters), new Set(['prod-eu', 'prod-us']));
    await panel.locator('.hints code', { hasText: "kubectl get pod web-7d9f-abcde -n shop -o 'jsonpath={.spec.containers[*].image}'" }).waitFor();
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it("lists each cluster's incidents, each row naming its cluster, and the picked cluster's only; a root opens in its cluster", async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const r = await request(srv.url, 'GET', `/apis/archive.kevents.io/v1alpha1/incidents?since=${since}`);
    assert.equal(r.status, 200, r.text);
    const served = (r.json as IncidentObjectList).items.map((i) => i.status);
    assert.deepEqual(new Set(served.map((i) => i.cluster)), new Set(Object.keys(FLEET)));

    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/`);
    await until(page, `document.querySelectorAll('#incident-list > li').length === ${served.length}`);
    assert.equal(new URL(page.url()).hash, '#/incidents');
    assert.deepEqual(await page.locator('#incident-list > li .inc-ns .cluster-tag').allTextContents(), served.map((i) => i.cluster));
    assert.deepEqual(await page.locator('#incident-list > li .inc-root a').allTextContents(), served.map((i) => i.root));
    await shoot(page, 'ui-clusters-incidents');

    await picker(page).selectOption('staging');
    await until(page, `document.querySelectorAll('#incident-list > li').length === 1`);
    assert.match(page.url(), /#\/incidents\?cluster=staging/);
    assert.deepEqual(await page.locator('#incident-list > li .inc-root a').allTextContents(), ['Job/report-28731']);

    // prod-eu's Deployment/web, not prod-us's: the timeline and the panel keep its cluster.
    await picker(page).selectOption('');
    const eu = page.locator('#incident-list > li').filter({ has: page.locator('.cluster-tag', { hasText: 'prod-eu' }) });
    await eu.first().waitFor();
    await eu.locator('.inc-root a', { hasText: 'Deployment/web' }).click();
    assert.match(page.url(), /#\/timeline\?cluster=prod-eu&ns=shop&.*object=Deployment%2Fshop%2Fweb/);
    const panel = page.getByRole('dialog', { name: /Deployment\/web/ });
    await panel.getByText('of prod-eu').waitFor();
    await panel.locator('table.incident-rows td', { hasText: 'Pod/web-7d9f-abcde' }).first().waitFor();
    assert.equal(await panel.locator('table.incident-rows td', { hasText: 'Pod/web-5b8c-q2w3e' }).count(), 0);
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('fits the picker and the cluster names on a phone screen without sideways scrolling', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const { page, seen } = await openPage(phone);
      for (const view of ['live', 'dashboard', 'timeline', 'incidents']) {
        await page.goto(`${srv.url}/#/${view}?cluster=prod-us`);
        await picker(page).waitFor();
        await page.locator(view === 'dashboard' ? '.chart svg rect.bar' : view === 'incidents' ? '#incident-list > li' : '[role=option]').first().waitFor();
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        assert.equal(overflow, 0, `${view} scrolls sideways by ${overflow}px`);
        await shoot(page, `ui-clusters-phone-${view}`);
      }
      assert.deepEqual(seen, { dialogs: [], errors: [] });
    } finally {
      await phone.close();
    }
  });

  it('serves the timeline of some clusters: the cluster parameter, repeatable, as kevents timeline --cluster reads them', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const served = async (query: string): Promise<Timeline> => {
      const r = await request(srv.url, 'GET', `/apis/archive.kevents.io/v1alpha1/timeline?since=${since}${query}`);
      assert.equal(r.status, 200, r.text);
      return r.json as Timeline;
    };
    const clustersOf = (t: Timeline): string[] => [...new Set(t.rows.map((r) => r.cluster ?? ''))].sort();
    assert.deepEqual(clustersOf(await served('')), ['prod-eu', 'prod-us', 'staging']);
    assert.deepEqual(clustersOf(await served('&cluster=staging')), ['staging']);
    const two = await served('&cluster=staging&cluster=prod-us');
    assert.deepEqual(clustersOf(two), ['prod-us', 'staging']);
    assert.equal(two.summary.occurrences, FLEET['staging']!.concat(FLEET['prod-us']!).reduce((n, e) => n + (e.count ?? 1), 0));
    const cli = await runBuiltCli(['timeline', '-A', '--cluster', 'staging', '--cluster', 'prod-us', '--since-time', since, '-o', 'json', '--server', srv.url]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual((JSON.parse(cli.stdout) as Timeline).rows, two.rows);
  });
});
