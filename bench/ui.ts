/**
 * bench/ui.ts measures the web UI against the targets of its issue, in headless
 * Chromium against a real `kevents serve` holding many events (SQLite store):
 *   first render of each view, as a ratio to a bare fetch + JSON.parse of the
 *   first list page made by the same page in the same run (the least any UI must do);
 *   time until every event is loaded;
 *   at 200 new events/s (creates and count bumps): frame gaps, long tasks,
 *   event-loop lag, and latency from an event's creation to its row on screen.
 * Run: npx tsx bench/ui.ts [--events 100000] [--rate 200] [--seconds 15] [--profile 1]
 * (--profile prints where the page spent its time under load; build the UI with
 * --minify false first to read the names).
 * Needs the built CLI and UI (npm run build) and /usr/bin/chromium.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { CoreEvent } from '../src/api/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { startServer } from '../test/support/server-process.js';
import { launchChromium, until } from '../test/ui-scenario.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const EVENTS = Number(args.get('events') ?? 100_000);
const RATE = Number(args.get('rate') ?? 200);
const SECONDS = Number(args.get('seconds') ?? 15);
const PROFILE = args.has('profile');
const CONCURRENCY = 64;
const REASONS: [string, string, string][] = [
  ['Warning', 'BackOff', 'Back-off restarting failed container app in pod'],
  ['Warning', 'FailedScheduling', '0/12 nodes are available: 12 Insufficient cpu.'],
  ['Warning', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503'],
  ['Normal', 'Pulled', 'Container image "registry.example.com/app:1.2.3" already present on machine'],
  ['Normal', 'Created', 'Created container app'],
  ['Normal', 'Started', 'Started container app'],
  ['Normal', 'Scheduled', 'Successfully assigned to node'],
];

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function post(base: string, path: string, body: unknown, method = 'POST', type = 'application/json'): Promise<number> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method, agent, headers: { 'Content-Type': type, 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(data);
  });
}

function event(i: number, secondsAgo: number, message?: string): { ns: string; body: Record<string, unknown> } {
  const [type, reason, text] = REASONS[i % REASONS.length]!;
  const ns = `team-${i % 40}`;
  const pod = `app-${(i * 7919) % 5000}-x${i % 13}`;
  const t = new Date(Date.now() - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    ns,
    body: {
      metadata: { name: `${pod}.${i.toString(16)}`, namespace: ns },
      involvedObject: { kind: 'Pod', namespace: ns, name: pod, apiVersion: 'v1' },
      reason,
      message: message ?? `${text} ${pod}`,
      type,
      source: { component: 'kubelet', host: `node-${i % 12}` },
      firstTimestamp: t,
      lastTimestamp: t,
      count: 1 + (i % 5),
    },
  };
}

/** seed fills the store file directly (the UI, not the write path, is measured here), spread over the last 23 hours. */
async function seed(path: string, n: number): Promise<number> {
  const start = performance.now();
  const store = new SqliteEventStore({ path, synchronous: 'NORMAL' });
  await store.ready();
  const created = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  for (let i = 0; i < n; i += 2000) {
    const writes: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + 2000); j++) {
      const { body } = event(j, ((n - j) / n) * 23 * 3600);
      const meta = body.metadata as Record<string, unknown>;
      meta.uid = `bench-${j}`;
      meta.creationTimestamp = created;
      writes.push(store.create({ apiVersion: 'v1', kind: 'Event', ...body } as unknown as CoreEvent));
    }
    await Promise.all(writes);
  }
  await store.close();
  return (performance.now() - start) / 1000;
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

// In-page probes, as text: this file is compiled for Node, without DOM types.
const PROBES = `
window.__bench = { firstRow: 0, frames: [], longTasks: [], lag: [], markers: [] };
new MutationObserver(() => {
  if (!window.__bench.firstRow && document.querySelector('[role=option], .chart canvas')) window.__bench.firstRow = performance.now();
  for (const el of document.querySelectorAll('#live-list .c-message')) {
    const m = /^marker (\\d+)$/.exec(el.textContent || '');
    if (m && !window.__bench.markers.some((x) => x.id === m[1])) window.__bench.markers.push({ id: m[1], latency: Date.now() - Number(m[1]) });
  }
}).observe(document, { childList: true, subtree: true, characterData: true });
`;

async function firstRender(page: Page, url: string, ready: string): Promise<{ firstRowMs: number; readyMs: number }> {
  // A new document each time: a hash change alone would reuse the loaded tab.
  await page.goto('about:blank');
  await page.goto(url);
  try {
    await page.waitForSelector(ready, { timeout: 60_000 });
  } catch (e) {
    await page.screenshot({ path: new URL('../test-artifacts/bench-ui-timeout.png', import.meta.url).pathname });
    throw e;
  }
  const firstRowMs = await page.evaluate<number>('window.__bench.firstRow');
  const readyMs = await page.evaluate<number>('performance.now()');
  return { firstRowMs, readyMs };
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples?: number[];
  timeDeltas?: number[];
}

function printProfile(profile: CpuProfile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  (profile.samples ?? []).forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop() ?? ''}:${f.lineNumber}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas?.[i] ?? 0));
  });
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-ui-'));
  const seedSeconds = await seed(join(dir, 'events.db'), EVENTS);
  console.log(`seeded ${EVENTS} events in ${seedSeconds.toFixed(1)} s`);
  const srv = await startServer(['--storage', `sqlite:${join(dir, 'events.db')}`, '--event-ttl', '0']);
  const browser = await launchChromium();
  const results: Record<string, unknown> = { events: EVENTS, rate: RATE, seconds: SECONDS };
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript({ content: PROBES });
    const page = await context.newPage();

    // Baseline: the same page fetches and parses the first list page, nothing else.
    await page.goto(`${srv.url}/version`);
    const baselines: number[] = [];
    for (let i = 0; i < 5; i++) {
      baselines.push(
        await page.evaluate<number>(`(async () => { const t = performance.now(); const r = await fetch('/api/v1/events?limit=500'); JSON.parse(await r.text()); return performance.now() - t; })()`),
      );
    }
    const baseline = pct(baselines, 50);

    const views: Record<string, { firstRowMs: number; readyMs: number }> = {};
    views.live = await firstRender(page, `${srv.url}/#/live`, '#live-list [role=option]');
    const loadStart = await page.evaluate<number>('performance.now()');
    await until(page, `/Live · ${EVENTS.toLocaleString('en-US')} events/.test(document.querySelector('.conn')?.textContent || '')`, 120_000);
    const allLoadedMs = (await page.evaluate<number>('performance.now()')) - loadStart + views.live.firstRowMs;
    views.dashboard = await firstRender(page, `${srv.url}/#/dashboard?window=24h`, '.chart canvas');
    views.timeline = await firstRender(page, `${srv.url}/#/timeline?from=${new Date(Date.now() - 3600_000).toISOString()}`, '#timeline-list [role=option]');
    results.baselineFirstPageMs = baseline;
    results.firstRender = Object.fromEntries(
      Object.entries(views).map(([k, v]) => [k, { firstRowMs: Math.round(v.firstRowMs), ratioToBaseline: +(v.firstRowMs / baseline).toFixed(1) }]),
    );
    results.allEventsLoadedMs = Math.round(allLoadedMs);

    // Live load: the live view open and fully loaded, RATE changes per second.
    await page.goto('about:blank');
    await page.goto(`${srv.url}/#/live`);
    await until(page, `/Live · [\\d,]+ events/.test(document.querySelector('.conn')?.textContent || '')`, 120_000);
    await page.evaluate(`(() => {
      const b = window.__bench;
      let last = performance.now();
      const frame = (t) => { b.frames.push(t - last); last = t; if (!b.stop) requestAnimationFrame(frame); };
      requestAnimationFrame(frame);
      new PerformanceObserver((l) => { for (const e of l.getEntries()) b.longTasks.push(e.duration); }).observe({ type: 'longtask' });
      let expect = performance.now() + 100;
      const tick = () => { const now = performance.now(); b.lag.push(Math.max(0, now - expect)); expect = now + 100; if (!b.stop) setTimeout(tick, 100); };
      setTimeout(tick, 100);
    })()`);
    const cdp = PROFILE ? await context.newCDPSession(page) : undefined;
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.start');
    }
    const start = Date.now();
    let sent = 0;
    let failed = 0;
    let keys = 0;
    const inFlight = new Set<Promise<unknown>>();
    while (Date.now() - start < SECONDS * 1000) {
      const due = Math.floor(((Date.now() - start) / 1000) * RATE);
      while (sent < due) {
        const i = EVENTS + sent;
        const isMarker = sent % RATE === 0;
        let p: Promise<number>;
        if (!isMarker && sent % 4 === 3) {
          // A repeat: bump an existing event's count, as the kubelet's correlator does.
          const j = (sent * 104729) % EVENTS;
          const { ns, body } = event(j, 0);
          const name = (body.metadata as { name: string }).name;
          p = post(srv.url, `/api/v1/namespaces/${ns}/events/${name}`, { count: 100 + sent, lastTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }, 'PATCH', 'application/merge-patch+json');
        } else {
          const { ns, body } = event(i, 0, isMarker ? `marker ${Date.now()}` : undefined);
          p = post(srv.url, `/api/v1/namespaces/${ns}/events`, body);
        }
        const tracked = p.then((code) => {
          if (code >= 300) failed++;
        }, () => failed++).finally(() => inFlight.delete(tracked));
        inFlight.add(tracked);
        sent++;
      }
      // Input keeps arriving while the stream runs: a key press every 250 ms,
      // down and up again, so the list stays at the top and keeps streaming.
      if (Date.now() - start > keys * 250) {
        await page.locator('#live-list').press(keys % 2 === 0 ? 'ArrowDown' : 'ArrowUp');
        keys++;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(inFlight);
    await new Promise((r) => setTimeout(r, 1500));
    const b = await page.evaluate<{ frames: number[]; longTasks: number[]; lag: number[]; markers: { latency: number }[] }>('(() => { window.__bench.stop = true; return window.__bench; })()');
    if (cdp) printProfile((await cdp.send('Profiler.stop')).profile);
    const latencies = b.markers.map((m) => m.latency);
    results.live = {
      sent,
      failed,
      achievedRate: +(sent / SECONDS).toFixed(0),
      framesP50Ms: +pct(b.frames, 50).toFixed(1),
      framesP99Ms: +pct(b.frames, 99).toFixed(1),
      framesMaxMs: +Math.max(...b.frames).toFixed(1),
      longTasks: b.longTasks.length,
      longTaskTotalMs: Math.round(b.longTasks.reduce((s, x) => s + x, 0)),
      eventLoopLagP99Ms: +pct(b.lag, 99).toFixed(1),
      markersSeen: `${latencies.length}/${Math.ceil(sent / RATE)}`,
      createToScreenP50Ms: pct(latencies, 50),
      createToScreenMaxMs: Math.max(...latencies),
    };
    console.log(JSON.stringify(results, null, 2));
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(new URL('./results/ui.json', import.meta.url), JSON.stringify(results, null, 2));
  } finally {
    await browser.close();
    await srv.stop();
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
