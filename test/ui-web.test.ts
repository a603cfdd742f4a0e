import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext } from 'playwright-core';
import { isoSecondsAgo, legacyEvent, request } from './support/http.js';
import { runBuiltCli } from './support/cli-process.js';
import type { Timeline } from '../src/api/index.js';
import { foldRuns } from '../src/api/row-runs.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { ARTIFACTS, dashboardTotal, launchChromium, mustCreate, openPage, rowCount, rows, rowTexts, seedScenario, shoot, until, XSS_MESSAGE } from './ui-scenario.js';

const BUILT_UI = fileURLToPath(new URL('../dist/ui/index.html', import.meta.url));
// The bar for the live view: a new event shows within a second.
const LIVE_DEADLINE_MS = 1000;

describe('web UI in headless Chromium against kevents serve', () => {
  let srv: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;

  before(async () => {
    assert.ok(existsSync(BUILT_UI), `${BUILT_UI} is missing: run "npm run build" (vite build --config src/ui/vite.config.ts)`);
    mkdirSync(ARTIFACTS, { recursive: true });
    srv = await startServer(['--event-ttl', '0']);
    await seedScenario(srv.url);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  it('loads the live view with every event, newest first, repeat counts shown', async () => {
    const { page, seen } = await openPage(context);
    // The archive has incidents, so `/` lands on them (test/ui-incidents.test.ts): the live view is asked for by name.
    await page.goto(`${srv.url}/#/live`);
    await page.getByText('Back-off restarting failed container api').waitFor();
    assert.equal(await rows(page, 'live-list').count(), 14);
    const reasons = await rowTexts(page, 'live-list', '.c-reason');
    assert.equal(reasons[0], 'BackOff', 'the latest repeat is on top');
    assert.deepEqual((await rowTexts(page, 'live-list', '.c-count')).slice(0, 2), ['×23', '×14']);
    assert.equal(await page.locator('.filters select[name=cluster]').count(), 0, 'events of no named cluster: no cluster picker');
    await shoot(page, 'ui-live');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('narrows the live view by namespace, type, reason, kind and free text, and keeps them in the URL', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live`);
    await rows(page, 'live-list').first().waitFor();

    await page.getByLabel('Namespace', { exact: true }).fill('shop');
    await rowCount(page, 'live-list', 9);
    assert.deepEqual(new Set(await rowTexts(page, 'live-list', '.c-ns')), new Set(['shop']));
    assert.match(page.url(), /ns=shop/);

    await page.getByLabel('Type').selectOption('Warning');
    await rowCount(page, 'live-list', 5);
    assert.deepEqual(new Set(await rowTexts(page, 'live-list', '.badge')), new Set(['Warning']));

    await page.getByLabel('Reason').fill('BackOff');
    await rowCount(page, 'live-list', 2);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Search').fill('insufficient CPU');
    await rowCount(page, 'live-list', 1);
    assert.deepEqual(await rowTexts(page, 'live-list', '.c-object'), ['pod/report-28731-zt5kq']);
    await shoot(page, 'ui-live-filtered');

    // A pasted link opens the same narrowed view.
    await page.goto(`${srv.url}/#/live?kind=Node`);
    await page.reload();
    await rowCount(page, 'live-list', 1);
    assert.deepEqual(await rowTexts(page, 'live-list', '.c-reason'), ['NodeHasDiskPressure']);
    assert.equal(await page.getByLabel('Kind').inputValue(), 'Node');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('shows an event created during the test within a second, and a repeat as a higher count', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live`);
    await rows(page, 'live-list').first().waitFor();
    await page.locator('.conn.live').waitFor();

    const message = `Created container sidecar ${Date.now()}`;
    await mustCreate(srv.url, '/api/v1/namespaces/', legacyEvent({
      name: `web-7d9f-abcde.live${Date.now()}`, namespace: 'shop', object: 'web-7d9f-abcde', reason: 'Created', host: 'node-a',
      message, firstAgo: 0, lastAgo: 0,
    }));
    await page.getByText(message).waitFor({ timeout: LIVE_DEADLINE_MS });
    assert.equal((await rowTexts(page, 'live-list', '.c-message'))[0], message);

    const bump = await request(srv.url, 'PATCH', '/api/v1/namespaces/kube-system/events/coredns-76f75df574-q8v2w.1', { count: 6, lastTimestamp: isoSecondsAgo(0) }, {
      'Content-Type': 'application/merge-patch+json',
    });
    assert.equal(bump.status, 200, bump.text);
    await page.locator('#live-list [role=option] .c-count', { hasText: '×6' }).waitFor({ timeout: LIVE_DEADLINE_MS });
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('pauses: new events wait behind a counter until resumed', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live`);
    await rows(page, 'live-list').first().waitFor();
    await page.locator('.conn.live').waitFor();
    await page.keyboard.press('p');
    assert.equal(await page.getByRole('button', { name: 'Resume' }).getAttribute('aria-pressed'), 'true');

    const message = `Started container paused-check ${Date.now()}`;
    await mustCreate(srv.url, '/api/v1/namespaces/', legacyEvent({
      name: `cache-0.paused${Date.now()}`, namespace: 'shop', object: 'cache-0', reason: 'Started', message, firstAgo: 0, lastAgo: 0,
    }));
    await page.getByRole('button', { name: /1 new change/ }).waitFor();
    assert.equal(await page.getByText(message).count(), 0);
    await page.getByRole('button', { name: /1 new change/ }).click();
    await page.getByText(message).waitFor();
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('shows an HTML message as text and runs nothing, in the list and in the object panel', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live?ns=default&reason=Failed`);
    const cell = page.locator('#live-list .c-message', { hasText: XSS_MESSAGE });
    await cell.waitFor();
    assert.equal(await cell.textContent(), XSS_MESSAGE);
    await rows(page, 'live-list').first().click();
    const panel = page.getByRole('dialog', { name: /Pod\/evil/ });
    // As text in the describe table and in the incident's rows alike.
    await panel.locator('table.describe:not(.incident-rows) td.message', { hasText: XSS_MESSAGE }).waitFor();
    await panel.locator('table.incident-rows td.message', { hasText: XSS_MESSAGE }).waitFor();
    assert.equal(await page.locator('#app img').count(), 0, 'no element was parsed out of the message');
    // The browser fires the broken image's onerror at once if one was made; give it a beat.
    await page.evaluate('new Promise((r) => setTimeout(r, 200))');
    await shoot(page, 'ui-xss-as-text');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('refuses HTML sinks and inline script under its Content-Security-Policy, and the test notices violations', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live`);
    await rows(page, 'live-list').first().waitFor();
    const sink = await page.evaluate<string>(`(() => { try { document.body.insertAdjacentHTML('beforeend', '<b id=injected>x</b>'); return 'parsed'; } catch (e) { return e.name; } })()`);
    assert.equal(sink, 'TypeError', 'Trusted Types reject a plain string');
    const script = await page.evaluate<string>(
      `(() => { try { const s = document.createElement('script'); s.src = 'data:text/javascript,alert(2)'; document.head.append(s); return 'appended'; } catch (e) { return e.name; } })()`,
    );
    assert.equal(script, 'TypeError', 'Trusted Types reject a plain script URL');
    await page.evaluate('new Promise((r) => setTimeout(r, 200))');
    assert.equal(await page.locator('#injected').count(), 0);
    assert.deepEqual(seen.dialogs, []);
    assert.ok(seen.errors.some((e) => e.startsWith('csp: require-trusted-types-for')), seen.errors.join('\n'));
    await page.close();
  });

  it('moves through the list by keyboard and opens and closes an object', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live?q=coredns`);
    await rows(page, 'live-list').first().waitFor();
    await page.locator('#live-list').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: /Pod\/coredns-76f75df574-q8v2w/ }).waitFor();
    assert.match(page.url(), /object=Pod%2Fkube-system%2Fcoredns-76f75df574-q8v2w/);
    await page.getByText("kubectl get pod coredns-76f75df574-q8v2w -n kube-system -o 'jsonpath={.spec.containers[*].readinessProbe}'").waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.keyboard.press('/');
    assert.equal(await page.evaluate('document.activeElement.id'), 'search');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('loads the warnings dashboard: a chart, counts by reason, namespace and kind, the noisiest objects, a selectable window', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/dashboard`);
    await page.locator('.chart svg rect.bar').first().waitFor();
    const byReason = page.getByRole('table', { name: 'By reason' });
    await byReason.getByRole('row', { name: /BackOff/ }).waitFor();
    // 23 repeats of the api pod's BackOff and 14 of the web pod's, all within the hour.
    assert.match((await byReason.getByRole('row', { name: /BackOff/ }).textContent()) ?? '', /BackOff\s*37$/);
    const noisiest = page.getByRole('table', { name: 'Noisiest objects' });
    assert.match((await noisiest.getByRole('row').nth(1).textContent()) ?? '', /Pod\/shop\/api-5c6b-x2k9p/);
    const byKind = await page.getByRole('table', { name: 'By kind' }).getByRole('row').allTextContents();
    assert.ok(byKind.some((r) => /^Node\s*1$/.test(r)), byKind.join('|'));
    const total = await dashboardTotal(page);
    assert.deepEqual(await page.getByLabel('Chart by').locator('option').allTextContents(), ['reason', 'namespace', 'kind'], 'no cluster to chart by');
    assert.equal(await page.getByRole('table', { name: 'By cluster' }).count(), 0);
    await shoot(page, 'ui-dashboard');

    await page.getByRole('button', { name: '15m' }).click();
    assert.match(page.url(), /window=15m/);
    await until(page, `Number(document.querySelector('.dashboard .count').dataset.total) < ${total}`);

    await page.getByLabel('Namespace', { exact: true }).fill('batch');
    await page.getByRole('button', { name: '1h' }).click();
    await until(page, `document.querySelector('.dashboard .count').dataset.total === '8'`);
    await page.getByLabel('Namespace', { exact: true }).fill('');

    await page.getByLabel('Chart by').selectOption('namespace');
    assert.match(page.url(), /by=namespace/);
    await noisiest.getByRole('button', { name: 'Pod/batch/report-28731-zt5kq' }).click();
    await page.getByRole('dialog', { name: /Pod\/report-28731-zt5kq/ }).waitFor();
    await page.getByText("kubectl get pod report-28731-zt5kq -n batch -o 'jsonpath={.spec.containers[*].resources.requests}'").waitFor();
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('charts warnings as stacked bars per bucket sized to the window, with whole-number ticks, estimated counts hatched, and a tooltip per bucket', async () => {
    const { page, seen } = await openPage(context);
    for (const [window, bars] of [['15m', '30 s'], ['1h', '2 min'], ['24h', '30 min']] as const) {
      await page.goto(`${srv.url}/#/dashboard?window=${window}`);
      await page.locator('.chart svg rect.bar').first().waitFor();
      await page.getByText(/Counts are from the archive's occurrences/).waitFor();
      await page.getByText(`bars of ${bars}`).waitFor();
      // Every warning of the window is in exactly one bar segment.
      await until(page, `[...document.querySelectorAll('.chart rect.bar')].reduce((s, r) => s + Number(r.dataset.count), 0) === Number(document.querySelector('.dashboard .count').dataset.total)`);
      const ticks = (await page.locator('.chart .y-axis .axis-label').allTextContents()).map(Number);
      assert.ok(ticks.length >= 2 && ticks.every((t) => Number.isInteger(t)), ticks.join(','));
      const buckets = await page.evaluate<number>(`Math.max(...[...document.querySelectorAll('.chart rect.bar')].map((r) => Number(r.dataset.bucket)))`);
      assert.ok(buckets < 48, `${buckets} buckets`);
      // Repeats spread between an event's known times are hatched; the observed ones are solid.
      assert.ok((await page.locator('.chart rect.bar.estimated').count()) > 0, 'estimated counts are drawn');
      assert.ok((await page.locator('.chart rect.bar:not(.estimated)').count()) > 0, 'observed counts are drawn');
      assert.match((await page.locator('.chart rect.bar.estimated').first().getAttribute('fill')) ?? '', /^url\(#hatch-\d+\)$/);
      assert.doesNotMatch((await page.locator('.chart rect.bar:not(.estimated)').first().getAttribute('fill')) ?? '', /^url/);
      await page.getByText(/hatched: time estimated \(\d+ of \d+\)/).waitFor();
      await shoot(page, `ui-dashboard-${window}`);
    }

    // 1h, by reason: point at the bucket of the latest BackOff and read its counts per series.
    await page.goto(`${srv.url}/#/dashboard`);
    await page.locator('.chart svg rect.bar').first().waitFor();
    await page.getByText(/Counts are from the archive's occurrences/).waitFor();
    const last = page.locator('.chart rect.bar[data-group=BackOff]').last();
    const bucket = await last.getAttribute('data-bucket');
    await last.hover();
    const tip = page.locator('.chart-tip');
    await tip.waitFor();
    const inBucket = await page.evaluate<Record<string, number>>(
      `[...document.querySelectorAll('.chart rect.bar[data-bucket="${bucket}"]')].reduce((o, r) => ({ ...o, [r.dataset.group]: (o[r.dataset.group] ?? 0) + Number(r.dataset.count) }), {})`,
    );
    const tipRows = await tip.locator('tbody tr').allTextContents();
    assert.equal(tipRows.length, Object.keys(inBucket).length, tipRows.join('|'));
    for (const [group, n] of Object.entries(inBucket)) assert.ok(tipRows.some((r) => r.startsWith(`${group}${n}`)), `${group} ${n} in ${tipRows.join('|')}`);
    assert.match((await tip.locator('.tip-time').textContent()) ?? '', /\d\d:\d\d – \d\d:\d\d/);
    await shoot(page, 'ui-dashboard-tooltip');

    // The same from the keyboard.
    await page.mouse.move(0, 0);
    await tip.waitFor({ state: 'detached' });
    await page.locator('.chart > svg').focus();
    await page.keyboard.press('ArrowLeft');
    await tip.waitFor();

    // By namespace, the series are namespaces.
    await page.getByLabel('Chart by').selectOption('namespace');
    await page.locator('.chart rect.bar[data-group=batch]').first().waitFor();
    assert.deepEqual(new Set(await page.locator('.chart .legend li:not(.legend-note)').allTextContents()), new Set(['shop', 'batch', 'kube-system', 'default']));
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('says what to do when there are no warnings, and draws the first one that arrives', async () => {
    const empty = await startServer(['--event-ttl', '0']);
    try {
      const { page, seen } = await openPage(context);
      // No incidents: `/` lands where it always did, on the live view, and writes no route of its own.
      await page.goto(`${empty.url}/`);
      await page.locator('section.live').waitFor();
      assert.equal(await page.getByRole('navigation', { name: 'Views' }).locator('[aria-current=page]').textContent(), 'Live');
      assert.equal(new URL(page.url()).hash, '');
      await page.goto(`${empty.url}/#/dashboard`);
      await page.locator('.conn.live').waitFor();
      await page.getByText('No warnings in the last 1h.').waitFor();
      await page.getByText(`kevents record --server ${empty.url} --for pod/web-1 --type Warning --reason BackOff`, { exact: false }).waitFor();
      assert.equal(await page.locator('.chart > svg').count(), 0);
      await shoot(page, 'ui-dashboard-empty');
      await page.getByRole('button', { name: 'the last 24h' }).click();
      assert.match(page.url(), /window=24h/);
      await page.getByText('No warnings in the last 24h.').waitFor();
      await page.getByLabel('Namespace', { exact: true }).fill('shop');
      await page.getByRole('button', { name: 'clear the filters' }).click();
      assert.equal(await page.getByLabel('Namespace', { exact: true }).inputValue(), '');

      await mustCreate(empty.url, '/api/v1/namespaces/', legacyEvent({
        name: 'web-1.first', namespace: 'default', object: 'web-1', reason: 'BackOff', type: 'Warning', message: 'Back-off restarting failed container', firstAgo: 5, lastAgo: 5,
      }));
      await page.locator('.chart rect.bar[data-group=BackOff][data-count="1"]').waitFor();
      assert.equal(await page.getByText(/No warnings/).count(), 0);
      assert.deepEqual(seen, { dialogs: [], errors: [] });
      await page.close();
    } finally {
      await empty.stop();
    }
  });

  it('loads the timeline: a lane per object, zoom by range, click-through to describe and next steps', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/timeline`);
    await rows(page, 'timeline-list').first().waitFor();
    assert.equal(await rows(page, 'timeline-list').count(), 10);
    const labels = await rowTexts(page, 'timeline-list', '.lane-label');
    assert.match(labels[0] ?? '', /Deployment web/, 'lanes run in order of each object\'s first event');
    assert.ok((await page.locator('#timeline-list .mark.warning').count()) > 10);
    await shoot(page, 'ui-timeline');

    await page.getByLabel('Namespace', { exact: true }).fill('batch');
    await rowCount(page, 'timeline-list', 2);

    await page.getByRole('button', { name: 'Zoom in' }).click();
    const zoomed = new URL(page.url()).hash;
    assert.match(zoomed, /from=.*&to=/);
    const p = new URLSearchParams(zoomed.split('?')[1]);
    assert.equal(Date.parse(p.get('to')!) - Date.parse(p.get('from')!), 30 * 60_000);

    await page.goto(`${srv.url}/#/timeline?ns=shop`);
    await page.locator('#timeline-list [role=option]', { hasText: 'web-7d9f-abcde' }).click();
    const panel = page.getByRole('dialog', { name: /Pod\/web-7d9f-abcde/ });
    const describe = panel.locator('table.describe:not(.incident-rows)');
    await describe.waitFor();
    const header = await describe.getByRole('row').first().textContent();
    assert.equal(header, 'TypeReasonAgeFromMessage');
    await panel.getByText(/\(x4 over 3?\d+m\)/).first().waitFor();
    await panel.getByText("kubectl get pod web-7d9f-abcde -n shop -o 'jsonpath={.spec.containers[*].image}'").waitFor();
    await shoot(page, 'ui-timeline-object');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('opens a Deployment as its incident: the ReplicaSet and Pod it owns, their warnings and the next steps, as kevents timeline --for prints them', async () => {
    const cli = await runBuiltCli(['timeline', '--for', 'deployment/web', '-n', 'shop', '--since', '30d', '-o', 'json', '--server', srv.url]);
    assert.equal(cli.code, 0, cli.stderr);
    const want = JSON.parse(cli.stdout) as Timeline;
    assert.ok(want.rows.some((r) => r.object === 'Pod/web-7d9f-abcde' && r.type === 'Warning'), 'the CLI follows the Deployment to its Pod');

    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live?object=Deployment%2Fshop%2Fweb`);
    const panel = page.getByRole('dialog', { name: /Deployment\/web/ });
    const incident = panel.locator('table.incident-rows tbody tr');
    await incident.first().waitFor();
    // The Deployment's own events (describe) are one; the incident holds what it owns too, row for row as the CLI.
    assert.equal(await panel.locator('table.describe:not(.incident-rows) tbody tr').count(), 1);
    // One row per run of one event's repeats, as the CLI's table folds them.
    const runs = foldRuns(want.rows);
    assert.equal(await incident.count(), runs.length);
    const objects = await panel.locator('table.incident-rows tbody td:nth-child(2)').allTextContents();
    assert.deepEqual(objects, runs.map((r) => r.first.object));
    assert.ok(objects.includes('ReplicaSet/web-7d9f') && objects.includes('Pod/web-7d9f-abcde'), objects.join('|'));
    assert.ok((await panel.locator('table.incident-rows tr.warning').count()) > 0, "the pod's warnings are in the incident");
    await panel.getByText(/First warning: .*(Failed|ErrImagePull|BackOff)/).waitFor();
    assert.match((await panel.locator('.incident-summary').textContent()) ?? '', /ReplicaSet\/web-7d9f, Pod\/web-7d9f-abcde/);
    // The image-pull next steps the server computes, exactly those the CLI prints.
    const commands = await panel.locator('.hints code').allTextContents();
    assert.deepEqual(commands, want.hints.map((h) => h.command));
    assert.ok(commands.includes("kubectl get pod web-7d9f-abcde -n shop -o 'jsonpath={.spec.containers[*].image}'"), commands.join('\n'));
    assert.equal(await panel.getByText('No specific steps').count(), 0);
    await shoot(page, 'ui-object-deployment');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('fits a phone screen without sideways scrolling', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const { page, seen } = await openPage(phone);
      for (const view of ['live', 'dashboard', 'timeline', 'incidents']) {
        await page.goto(`${srv.url}/#/${view}`);
        await page.locator(view === 'dashboard' ? '.chart svg rect.bar' : view === 'incidents' ? '#incident-list > li' : '[role=option]').first().waitFor();
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        assert.equal(overflow, 0, `${view} scrolls sideways by ${overflow}px`);
        await shoot(page, `ui-phone-${view}`);
      }
      assert.deepEqual(seen, { dialogs: [], errors: [] });
    } finally {
      await phone.close();
    }
  });
});
