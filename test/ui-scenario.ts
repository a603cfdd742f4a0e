import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { legacyEvent, newApiEvent, request } from './support/http.js';

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
