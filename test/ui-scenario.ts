import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { CoreEvent } from '../src/api/index.js';
import { archiveWrite } from '../src/mirror/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { isoSecondsAgo, legacyEvent, microSecondsAgo, newApiEvent, request } from './support/http.js';

/** ARTIFACTS holds screenshots of every view (git-ignored), among them the dashboard at 15m, 1h and 24h: test-artifacts/ui-*.png. */
export const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));

/** CHROMIUM is Debian's chromium, which playwright-core drives without a downloaded browser. */
export const CHROMIUM = process.env.KEVENTS_CHROMIUM ?? '/usr/bin/chromium';

/** launchChromium starts headless Chromium with no traffic of its own (updates, sync, QUIC). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** XSS_MESSAGE is an event message that would run script if rendered as HTML. */
export const XSS_MESSAGE = '<img src=x onerror=alert(1)>';

/**
 * seedScenario writes an incident through both event APIs, as kubelet,
 * scheduler and controllers would: an image that will not pull, a crash loop,
 * an unschedulable job, a failing probe, node disk pressure with an eviction,
 * a rollout (Deployment, ReplicaSet, Pod), and one event whose message is HTML.
 */
export async function seedScenario(base: string): Promise<void> {
  const core = [
    legacyEvent({ name: 'web-7d9f-abcde.1', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'Scheduled', component: 'default-scheduler',
      message: 'Successfully assigned shop/web-7d9f-abcde to node-a', firstAgo: 1800, lastAgo: 1800 }),
    legacyEvent({ name: 'web-7d9f-abcde.2', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'Pulling', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Pulling image "registry.example.com/shop/web:1.4.2"', count: 4, firstAgo: 1790, lastAgo: 600 }),
    legacyEvent({ name: 'web-7d9f-abcde.3', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'Failed', type: 'Warning', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Failed to pull image "registry.example.com/shop/web:1.4.2": rpc error: code = NotFound desc = manifest unknown', count: 4, firstAgo: 1780, lastAgo: 590 }),
    legacyEvent({ name: 'web-7d9f-abcde.4', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'ErrImagePull', type: 'Warning', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Error: ErrImagePull', count: 4, firstAgo: 1780, lastAgo: 590 }),
    legacyEvent({ name: 'api-5c6b-x2k9p.1', namespace: 'shop', object: 'api-5c6b-x2k9p', reason: 'BackOff', type: 'Warning', host: 'node-b', fieldPath: 'spec.containers{api}',
      message: 'Back-off restarting failed container api in pod api-5c6b-x2k9p_shop(8f1c0a4e)', count: 23, firstAgo: 1500, lastAgo: 30 }),
    legacyEvent({ name: 'coredns-76f75df574-q8v2w.1', namespace: 'kube-system', object: 'coredns-76f75df574-q8v2w', reason: 'Unhealthy', type: 'Warning', host: 'node-a',
      fieldPath: 'spec.containers{coredns}', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', count: 5, firstAgo: 1200, lastAgo: 900 }),
    legacyEvent({ name: 'node-b.1', namespace: 'default', kind: 'Node', object: 'node-b', reason: 'NodeHasDiskPressure', type: 'Warning', host: 'node-b',
      message: 'Node node-b status is now: NodeHasDiskPressure', firstAgo: 1000, lastAgo: 1000 }),
    legacyEvent({ name: 'cache-0.1', namespace: 'shop', object: 'cache-0', reason: 'Evicted', type: 'Warning', host: 'node-b',
      message: 'The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 8Gi.', firstAgo: 950, lastAgo: 950 }),
    legacyEvent({ name: 'web.1', namespace: 'shop', kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', component: 'deployment-controller',
      message: 'Scaled up replica set web-7d9f to 3', firstAgo: 1810, lastAgo: 1810 }),
    legacyEvent({ name: 'web-7d9f.1', namespace: 'shop', kind: 'ReplicaSet', object: 'web-7d9f', reason: 'SuccessfulCreate', component: 'replicaset-controller',
      message: 'Created pod: web-7d9f-abcde', firstAgo: 1805, lastAgo: 1805 }),
    legacyEvent({ name: 'evil.1', namespace: 'default', object: 'evil', reason: 'Failed', type: 'Warning', message: XSS_MESSAGE, firstAgo: 120, lastAgo: 120 }),
  ];
  const v1 = [
    newApiEvent({ name: 'web-7d9f-abcde.5', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'BackOff', type: 'Warning', action: 'Pulling', controller: 'kubelet',
      note: 'Back-off pulling image "registry.example.com/shop/web:1.4.2"', eventAgo: 1770, series: { count: 14, lastAgo: 60 } }),
    newApiEvent({ name: 'report-28731-zt5kq.1', namespace: 'batch', object: 'report-28731-zt5kq', reason: 'FailedScheduling', type: 'Warning', action: 'Scheduling',
      note: '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.', eventAgo: 1400,
      series: { count: 8, lastAgo: 200 } }),
    newApiEvent({ name: 'report-28731.1', namespace: 'batch', kind: 'Job', object: 'report-28731', reason: 'SuccessfulCreate', action: 'Create', controller: 'job-controller',
      note: 'Created pod: report-28731-zt5kq', eventAgo: 1401 }),
  ];
  for (const e of core) await mustCreate(base, '/api/v1/namespaces/', e);
  for (const e of v1) await mustCreate(base, '/apis/events.k8s.io/v1/namespaces/', e);
}

/** mustCreate posts one event to its namespace and fails loudly if the server refuses it. */
export async function mustCreate(base: string, prefix: string, e: Record<string, unknown>): Promise<void> {
  const ns = (e.metadata as { namespace: string }).namespace;
  const res = await request(base, 'POST', `${prefix}${ns}/events`, e);
  if (res.status !== 201) throw new Error(`create ${JSON.stringify(e.metadata)}: ${res.status} ${res.text}`);
}

/**
 * until polls a page-side expression until it is truthy. Playwright's
 * waitForFunction evaluates its polls with eval, which the UI's
 * Content-Security-Policy forbids, so polling happens from Node instead.
 */
export async function until(page: Page, expression: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await page.evaluate<boolean>(`Boolean(${expression})`)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Watched is what a page did that a test should not see: dialogs, page errors, CSP violations. */
export interface Watched {
  dialogs: string[];
  errors: string[];
}

/** openPage opens a page that records dialogs, page errors and CSP violations. */
export async function openPage(context: BrowserContext): Promise<{ page: Page; seen: Watched }> {
  const page = await context.newPage();
  const seen: Watched = { dialogs: [], errors: [] };
  page.on('dialog', (d) => {
    seen.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => seen.errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') seen.errors.push(`console: ${m.text()}`);
  });
  await page.exposeFunction('__cspViolation', (text: string) => seen.errors.push(`csp: ${text}`));
  // Page-side code is given as text: this test is compiled for Node, without DOM types.
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => window.__cspViolation(e.violatedDirective + ' ' + e.blockedURI));",
  });
  return { page, seen };
}

/** rows are the rows a virtual list draws. */
export const rows = (page: Page, list: string) => page.locator(`#${list} [role=option]`);

/** rowCount waits until a list shows exactly n rows. */
export async function rowCount(page: Page, list: string, n: number): Promise<void> {
  await until(page, `document.querySelectorAll('#${list} [role=option]').length === ${n}`);
}

/** dashboardTotal is the number of warnings the dashboard counts. */
export async function dashboardTotal(page: Page): Promise<number> {
  return Number(await page.locator('.dashboard .count').getAttribute('data-total'));
}

/** rowTexts are the texts of one cell of every drawn row of a list. */
export async function rowTexts(page: Page, list: string, selector: string): Promise<string[]> {
  return page.locator(`#${list} [role=option] ${selector}`).allTextContents();
}

/** shoot saves a screenshot of the page under ARTIFACTS. */
export async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png` });
}

/** ClusterEvent is one event of a cluster's source, written to the archive as its mirror writes it. */
type ClusterEvent = Omit<Parameters<typeof legacyEvent>[0], 'uid'>;

/**
 * FLEET is three clusters' events. prod-eu's Deployment shop/web rolls out a
 * Pod whose image will not pull (22 warnings); prod-us has a Deployment of the
 * same name whose rollout went well, a crash loop and a failing probe (28
 * warnings; its events of the same names as prod-eu's are archived under other
 * names); staging has an unschedulable job (8 warnings).
 */
export const FLEET: Record<string, ClusterEvent[]> = {
  'prod-eu': [
    { name: 'web.1', namespace: 'shop', kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', component: 'deployment-controller',
      message: 'Scaled up replica set web-7d9f to 1', firstAgo: 1810, lastAgo: 1810 },
    { name: 'web-7d9f.1', namespace: 'shop', kind: 'ReplicaSet', object: 'web-7d9f', reason: 'SuccessfulCreate', component: 'replicaset-controller',
      message: 'Created pod: web-7d9f-abcde', firstAgo: 1805, lastAgo: 1805 },
    { name: 'web-7d9f-abcde.1', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'Scheduled', component: 'default-scheduler',
      message: 'Successfully assigned shop/web-7d9f-abcde to node-a', firstAgo: 1800, lastAgo: 1800 },
    { name: 'web-7d9f-abcde.2', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'Pulling', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Pulling image "registry.example.com/shop/web:1.4.2"', count: 4, firstAgo: 1790, lastAgo: 600 },
    { name: 'web-7d9f-abcde.3', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'Failed', type: 'Warning', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Failed to pull image "registry.example.com/shop/web:1.4.2": rpc error: code = NotFound desc = manifest unknown', count: 4, firstAgo: 1780, lastAgo: 590 },
    { name: 'web-7d9f-abcde.4', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'ErrImagePull', type: 'Warning', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Error: ErrImagePull', count: 4, firstAgo: 1780, lastAgo: 590 },
    { name: 'web-7d9f-abcde.5', namespace: 'shop', object: 'web-7d9f-abcde', reason: 'BackOff', type: 'Warning', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Back-off pulling image "registry.example.com/shop/web:1.4.2"', count: 14, firstAgo: 1770, lastAgo: 60 },
  ],
  'prod-us': [
    { name: 'web.1', namespace: 'shop', kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', component: 'deployment-controller',
      message: 'Scaled up replica set web-5b8c to 1', firstAgo: 1700, lastAgo: 1700 },
    { name: 'web-5b8c.1', namespace: 'shop', kind: 'ReplicaSet', object: 'web-5b8c', reason: 'SuccessfulCreate', component: 'replicaset-controller',
      message: 'Created pod: web-5b8c-q2w3e', firstAgo: 1695, lastAgo: 1695 },
    { name: 'web-5b8c-q2w3e.1', namespace: 'shop', object: 'web-5b8c-q2w3e', reason: 'Scheduled', component: 'default-scheduler',
      message: 'Successfully assigned shop/web-5b8c-q2w3e to node-c', firstAgo: 1690, lastAgo: 1690 },
    { name: 'web-5b8c-q2w3e.2', namespace: 'shop', object: 'web-5b8c-q2w3e', reason: 'Pulled', host: 'node-c', fieldPath: 'spec.containers{web}',
      message: 'Container image "registry.example.com/shop/web:1.4.1" already present on machine', firstAgo: 1685, lastAgo: 1685 },
    { name: 'web-5b8c-q2w3e.3', namespace: 'shop', object: 'web-5b8c-q2w3e', reason: 'Started', host: 'node-c', fieldPath: 'spec.containers{web}',
      message: 'Started container web', firstAgo: 1684, lastAgo: 1684 },
    { name: 'api-5c6b-x2k9p.1', namespace: 'shop', object: 'api-5c6b-x2k9p', reason: 'BackOff', type: 'Warning', host: 'node-d', fieldPath: 'spec.containers{api}',
      message: 'Back-off restarting failed container api in pod api-5c6b-x2k9p_shop(8f1c0a4e)', count: 23, firstAgo: 1500, lastAgo: 30 },
    { name: 'coredns-76f75df574-q8v2w.1', namespace: 'kube-system', object: 'coredns-76f75df574-q8v2w', reason: 'Unhealthy', type: 'Warning', host: 'node-c',
      fieldPath: 'spec.containers{coredns}', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', count: 5, firstAgo: 1200, lastAgo: 900 },
  ],
  staging: [
    { name: 'report-28731.1', namespace: 'batch', kind: 'Job', object: 'report-28731', reason: 'SuccessfulCreate', component: 'job-controller',
      message: 'Created pod: report-28731-zt5kq', firstAgo: 1401, lastAgo: 1401 },
    { name: 'report-28731-zt5kq.1', namespace: 'batch', object: 'report-28731-zt5kq', reason: 'FailedScheduling', type: 'Warning', component: 'default-scheduler',
      message: '0/3 nodes are available: 3 Insufficient cpu.', count: 8, firstAgo: 1400, lastAgo: 200 },
  ],
};

/**
 * seedFleet writes FLEET into an archive file as three mirrors would: each
 * event through the mirror's own write (src/mirror archiveWrite: the cluster
 * label, its UID, another name where another cluster's event holds one), its
 * first occurrence observed when it first happened and its repeats when it
 * last did, each stamped with its cluster.
 */
export async function seedFleet(path: string): Promise<void> {
  const store = new SqliteEventStore({ path });
  await store.ready();
  try {
    let rv = 0;
    for (const [cluster, events] of Object.entries(FLEET)) {
      const origin = { cluster, clusterUID: `kube-system-uid-${cluster}` };
      for (const [i, o] of events.entries()) {
        const full = legacyEvent(o) as unknown as CoreEvent;
        full.metadata = { ...full.metadata, uid: `${cluster}-${i}`, creationTimestamp: isoSecondsAgo(o.firstAgo) };
        const versions: [CoreEvent, number][] = [];
        if ((o.count ?? 1) > 1) versions.push([{ ...full, count: 1, lastTimestamp: full.firstTimestamp }, o.firstAgo]);
        versions.push([full, o.lastAgo]);
        for (const [version, ago] of versions) {
          const e = { ...version, metadata: { ...version.metadata, resourceVersion: String(++rv) } };
          await store.applyArchiveBatch({ writes: [archiveWrite(e, origin)], stamp: { observedTime: microSecondsAgo(ago), ...origin } });
        }
      }
    }
  } finally {
    await store.close();
  }
}
