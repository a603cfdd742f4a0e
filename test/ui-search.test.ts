import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { ARTIFACTS, launchChromium, openPage, rows, rowTexts, shoot, until, XSS_MESSAGE } from './ui-scenario.js';
import type { Watched } from './ui-scenario.js';
import { CHECKOUT_HITS, seedSearchArchive } from './ui-search-seed.js';
import type { SeededHit } from './ui-search-seed.js';

const BUILT_UI = fileURLToPath(new URL('../dist/ui/index.html', import.meta.url));
// An archive of 100,000 events, as a user's month of a small cluster; KEVENTS_UI_SEARCH_EVENTS sets another size.
const EVENTS = Number(process.env.KEVENTS_UI_SEARCH_EVENTS ?? 100_000);
const QUERY = 'checkout-db reason:FailedMount';
// The page size of the search view (src/ui/app/search-view.tsx SEARCH_PAGE).
const PAGE = 50;

const status = (page: Page) => page.locator('.search .count');

/** settled waits until the search view has answered a search: no request under way, none waiting for the typing to pause. */
async function settled(page: Page, shown?: number): Promise<void> {
  // A page of the served search reads each hit's occurrences, which takes seconds on a loaded machine: wait long.
  await until(page, `document.querySelector('.search .count')?.dataset.phase === 'done'${shown !== undefined ? ` && document.querySelector('.search .count').dataset.shown === '${shown}'` : ''}`, 120_000);
}

/** scrollToEnd scrolls the hit list to its end, as a reader does. */
async function scrollToEnd(page: Page): Promise<void> {
  await page.locator('#search-list').hover();
  await page.mouse.wheel(0, 1_000_000);
}

/** visibleHits are the object and message of each drawn hit. */
async function visibleHits(page: Page): Promise<string[]> {
  const objects = await rowTexts(page, 'search-list', '.c-object');
  const messages = await rowTexts(page, 'search-list', '.c-message');
  return objects.map((o, i) => `${o} ${messages[i]}`);
}

/** noErrors asserts a page did nothing unexpected, the browser's own line for a refused request (a bad query's 400) aside. */
function noErrors(seen: Watched): void {
  assert.deepEqual({ dialogs: seen.dialogs, errors: seen.errors.filter((e) => !/status of 400/.test(e)) }, { dialogs: [], errors: [] });
}

describe(`web UI search over an SQLite archive of ${EVENTS.toLocaleString('en')} events, in headless Chromium`, () => {
  let dir: string;
  let srv: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let hits: SeededHit[];
  let firstPage: string[] = [];

  before(async () => {
    assert.ok(existsSync(BUILT_UI), `${BUILT_UI} is missing: run "npm run build"`);
    mkdirSync(ARTIFACTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'kevents-ui-search-'));
    const db = join(dir, 'archive.db');
    hits = await seedSearchArchive(db, EVENTS);
    assert.equal(hits.length, CHECKOUT_HITS);
    srv = await startServer(['--storage', `sqlite:${db}`, '--event-ttl', '0']);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('searches as the user types: the hit histogram over the window, the first page newest first, the next pages as the list scrolls', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/search`);
    await settled(page);
    assert.equal(await status(page).getAttribute('data-total'), String(EVENTS), 'an empty query finds every event of the window');

    await page.getByRole('searchbox', { name: 'Search' }).fill(QUERY);
    await settled(page, PAGE);
    assert.equal(await status(page).getAttribute('data-total'), String(CHECKOUT_HITS));
    assert.match(page.url(), /#\/search\?q=checkout-db\+reason%3AFailedMount$/, 'the search is in the URL');
    // The histogram counts every hit of the window, not only those of the page.
    const bars = await page.locator('.search .chart rect.bar').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-count'))));
    assert.ok(bars.length > 1, 'hits spread over several buckets');
    assert.equal(bars.reduce((a, b) => a + b, 0), CHECKOUT_HITS);

    const drawn = await rowTexts(page, 'search-list', '.c-object');
    assert.ok(drawn.length > 5, `rows drawn: ${drawn.length}`);
    assert.deepEqual(drawn, hits.slice(0, drawn.length).map((h) => `pod/${h.object}`), 'newest first');
    assert.deepEqual(new Set(await rowTexts(page, 'search-list', '.c-reason')), new Set(['FailedMount']));
    firstPage = await visibleHits(page);
    await shoot(page, 'ui-search');

    await scrollToEnd(page);
    await settled(page, 2 * PAGE);
    await scrollToEnd(page);
    await settled(page, CHECKOUT_HITS);
    assert.ok(CHECKOUT_HITS > 2 * PAGE && CHECKOUT_HITS < 3 * PAGE, 'three pages, the last one short');
    assert.doesNotMatch(await status(page).innerText(), /scroll for more/);
    const last = await rowTexts(page, 'search-list', '.c-object');
    assert.equal(last[last.length - 1], `pod/${hits[hits.length - 1]!.object}`, 'the oldest hit ends the list');
    noErrors(seen);
    await page.close();
  });

  it('opens a shared #/search?q= link on the same hits', async () => {
    assert.ok(firstPage.length > 0, 'the first test saw the first page');
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/search?q=${encodeURIComponent(QUERY)}`);
    await settled(page, PAGE);
    assert.equal(await page.getByRole('searchbox', { name: 'Search' }).inputValue(), QUERY);
    assert.equal(await status(page).getAttribute('data-total'), String(CHECKOUT_HITS));
    assert.deepEqual(await visibleHits(page), firstPage);
    noErrors(seen);
    await page.close();
  });

  it('shows a query error inline, with its position, and a message as text', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/search`);
    await page.getByRole('searchbox', { name: 'Search' }).fill('pull "image');
    const error = page.getByRole('alert');
    await error.waitFor();
    assert.equal(await error.innerText(), 'q: invalid search query at position 6: the quote is never closed');
    assert.equal(await rows(page, 'search-list').count(), 0);

    await page.getByRole('searchbox', { name: 'Search' }).fill('onerror checkout-db');
    await settled(page, 1);
    assert.equal(await page.getByRole('alert').count(), 0, 'the error goes with the query');
    assert.match((await rowTexts(page, 'search-list', '.c-message'))[0]!, new RegExp(`^${XSS_MESSAGE.replace(/[()]/g, '\\$&')} MountVolume`));
    assert.equal(await page.locator('#app img').count(), 0, 'no element was parsed out of the message');
    const marks = await page.locator('#search-list [role=option]').first().locator('.c-message mark.hit').allTextContents();
    assert.ok(marks.includes('onerror') && marks.includes('checkout-db'), `the query's words are marked in the message, as text: ${JSON.stringify(marks)}`);
    await page.evaluate('new Promise((r) => setTimeout(r, 200))');
    noErrors(seen);
    await page.close();
  });

  it('opens the object panel from a hit', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/search?q=${encodeURIComponent(QUERY)}`);
    await settled(page, PAGE);
    await rows(page, 'search-list').first().click();
    const panel = page.getByRole('dialog', { name: new RegExp(`Pod/${hits[0]!.object} in shop`) });
    await panel.waitFor();
    assert.match(page.url(), /object=Pod%2Fshop%2Fcheckout-db-/);
    await panel.locator('td.message', { hasText: 'checkout-db volume not attached' }).first().waitFor();
    await shoot(page, 'ui-search-object');
    noErrors(seen);
    await page.close();
  });
});
