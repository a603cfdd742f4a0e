import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { legacyEvent } from './support/http.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { ARTIFACTS, launchChromium, mustCreate, openPage, rows, shoot, until } from './ui-scenario.js';

/**
 * Event text that would read in another order than it runs, or hide part of
 * itself, shown by the built UI in headless Chromium: each value isolated (a
 * `<bdi>`), each bidi or zero-width character drawn as the marker the CLI
 * prints for it (`\u202e`), and the search's marks still on the words.
 */

const BUILT_UI = fileURLToPath(new URL('../dist/ui/index.html', import.meta.url));

// U+202E RIGHT-TO-LEFT OVERRIDE would draw `lave…` reversed, U+200B ZERO WIDTH SPACE hides between two words,
// U+2066 LEFT-TO-RIGHT ISOLATE and U+2069 POP DIRECTIONAL ISOLATE wrap a word.
const MESSAGE = 'Pulled image exe.\u202elave\u200bpayload \u2066isolated\u2069 done';
const SHOWN = 'Pulled image exe.\\u202elave\\u200bpayload \\u2066isolated\\u2069 done';
const MARKERS = ['\\u202e', '\\u200b', '\\u2066', '\\u2069'];
// A Warning's object whose name holds a right-to-left override (the API server checks no referenced name).
const OBJECT = 'cache-\u202e0-ipa';
const OBJECT_SHOWN = 'cache-\\u202e0-ipa';
/** RAW are the characters that must never reach the page as themselves. */
const RAW = /[\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

/** Cell is what a page shows of one cell of event text. */
interface Cell {
  /** tag and bidi are the tag and computed unicode-bidi of the element that holds the text. */
  tag: string;
  bidi: string;
  text: string;
  /** markers are the texts of the drawn markers, and widths their widths in pixels. */
  markers: string[];
  widths: number[];
  /** marks are the search's marked pieces: their text and the markers inside them. */
  marks: { text: string; markers: string[] }[];
}

/** cell describes the first element `selector` finds, from the page's DOM (given as text: this test is compiled without DOM types). */
async function cell(page: Page, selector: string): Promise<Cell | null> {
  return page.evaluate<Cell | null>(`(() => {
    const cell = document.querySelector(${JSON.stringify(selector)});
    if (cell === null) return null;
    const holder = cell.firstElementChild;
    const markers = (el) => [...el.querySelectorAll('.ctl')];
    return {
      tag: holder === null ? '' : holder.tagName,
      bidi: holder === null ? '' : getComputedStyle(holder).unicodeBidi,
      text: cell.textContent,
      markers: markers(cell).map((m) => m.textContent),
      widths: markers(cell).map((m) => m.getBoundingClientRect().width),
      marks: [...cell.querySelectorAll('mark.hit')].map((m) => ({ text: m.textContent, markers: markers(m).map((c) => c.textContent) })),
    };
  })()`);
}

/** assertShown asserts a cell holds MESSAGE isolated, with its four characters shown as markers that take room. */
function assertShown(got: Cell | null, where: string): Cell {
  assert.ok(got !== null, `${where}: no cell`);
  assert.equal(got.tag, 'BDI', `${where}: the text is in a <bdi>`);
  assert.equal(got.bidi, 'isolate', `${where}: the text is isolated`);
  assert.equal(got.text, SHOWN, `${where}: every bidi and zero-width character is shown, none obeyed`);
  assert.doesNotMatch(got.text, RAW, where);
  assert.deepEqual(got.markers, MARKERS, `${where}: each is drawn as a marker`);
  assert.ok(got.widths.every((w) => w > 0), `${where}: markers take room: ${JSON.stringify(got.widths)}`);
  return got;
}

describe('web UI: event text isolated and its invisible characters shown, in headless Chromium', () => {
  let srv: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;

  before(async () => {
    assert.ok(existsSync(BUILT_UI), `${BUILT_UI} is missing: run "npm run build"`);
    mkdirSync(ARTIFACTS, { recursive: true });
    srv = await startServer(['--event-ttl', '0']);
    await mustCreate(srv.url, '/api/v1/namespaces/', legacyEvent({
      name: 'spoof.1', namespace: 'shop', object: 'spoof-0', reason: 'Pulled', host: 'node-a', message: MESSAGE, firstAgo: 60, lastAgo: 60,
    }));
    await mustCreate(srv.url, '/api/v1/namespaces/', legacyEvent({
      name: 'plain.1', namespace: 'shop', object: 'plain-0', reason: 'Started', host: 'node-a', message: 'Started container payload', firstAgo: 120, lastAgo: 120,
    }));
    await mustCreate(srv.url, '/api/v1/namespaces/', legacyEvent({
      name: 'spoof-warning.1', namespace: 'shop', object: OBJECT, reason: 'BackOff', type: 'Warning', host: 'node-a', message: 'Back-off restarting failed container', firstAgo: 300, lastAgo: 300,
    }));
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  it('the live view isolates each value and shows the controls of a message as markers', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/live`);
    await until(page, `document.querySelectorAll('#live-list [role=option]').length === 3`);
    const row = '#live-list [role=option]:first-child';
    assertShown(await cell(page, `${row} .c-message`), 'live');
    for (const c of ['.c-reason', '.c-ns']) {
      const got = await cell(page, `${row} ${c}`);
      assert.deepEqual([got?.tag, got?.bidi], ['BDI', 'isolate'], `live ${c}`);
    }
    assert.equal((await cell(page, `${row} .c-object`))?.text, 'pod/spoof-0');
    await shoot(page, 'ui-event-text-live');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('the search view marks a phrase across a zero-width space, the marker inside the mark, and the object panel shows the message so too', async () => {
    const { page, seen } = await openPage(context);
    await page.goto(`${srv.url}/#/search?q=${encodeURIComponent('"lave payload"')}`);
    await until(page, `document.querySelector('.search .count')?.dataset.phase === 'done' && document.querySelector('.search .count').dataset.shown === '1'`, 60_000);
    const got = assertShown(await cell(page, '#search-list [role=option] .c-message'), 'search');
    assert.deepEqual(got.marks, [{ text: 'lave\\u200bpayload', markers: ['\\u200b'] }], 'the phrase is marked on its words, the zero-width space between them shown inside');
    await shoot(page, 'ui-event-text-search');

    await rows(page, 'search-list').first().click();
    await page.getByRole('dialog', { name: /Pod\/spoof-0 in shop/ }).waitFor();
    await until(page, `document.querySelector('.panel table.describe td.message') !== null`);
    // The describe table's message cell starts with its own text (no field path): its first element is the message.
    assertShown(await cell(page, '.panel table.describe td.message'), 'object panel');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });

  it('the timeline, the dashboard and the incidents isolate an object name and show its override as a marker', async () => {
    const { page, seen } = await openPage(context);
    /** named asserts the first element `selector` finds shows the name isolated, its override as a marker. */
    const named = async (selector: string, want: string, where: string): Promise<void> => {
      await until(page, `[...document.querySelectorAll(${JSON.stringify(selector)})].some((e) => e.textContent.includes(${JSON.stringify(OBJECT_SHOWN)}))`, 60_000);
      const got = await page.evaluate<{ text: string; tags: string[]; bidi: string[]; markers: string[] }>(`(() => {
        const el = [...document.querySelectorAll(${JSON.stringify(selector)})].find((e) => e.textContent.includes(${JSON.stringify(OBJECT_SHOWN)}));
        const isolated = [...el.querySelectorAll('bdi')].filter((b) => b.textContent.includes(${JSON.stringify(OBJECT_SHOWN)}));
        return { text: el.textContent, tags: isolated.map((b) => b.tagName), bidi: isolated.map((b) => getComputedStyle(b).unicodeBidi), markers: [...el.querySelectorAll('.ctl')].map((m) => m.textContent) };
      })()`);
      assert.equal(got.text, want, where);
      assert.doesNotMatch(got.text, RAW, where);
      assert.deepEqual(got.bidi, ['isolate'], `${where}: the name is in one isolated <bdi>`);
      assert.deepEqual(got.markers, ['\\u202e'], `${where}: the override is drawn as a marker`);
    };
    await page.goto(`${srv.url}/#/timeline`);
    await named('#timeline-list .lane-label', `Pod ${OBJECT_SHOWN}shop⚠ 1`, 'timeline');
    await page.goto(`${srv.url}/#/dashboard`);
    await named('.tally button.link', `Pod/shop/${OBJECT_SHOWN}`, 'dashboard');
    await page.goto(`${srv.url}/#/incidents`);
    await named('#incident-list .inc-root a', `Pod/${OBJECT_SHOWN}`, 'incidents');
    await shoot(page, 'ui-event-text-incidents');
    assert.deepEqual(seen, { dialogs: [], errors: [] });
    await page.close();
  });
});
