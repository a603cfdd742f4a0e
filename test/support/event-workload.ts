import assert from 'node:assert/strict';
import { legacyEvent, newApiEvent, request } from './http.js';

/** The events a test of the export writes, through both APIs, and what the archive then says of them. */

const CORE = '/api/v1/namespaces/app/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/app/events';
const OCCURRENCES = '/apis/archive.kevents.io/v1alpha1/occurrences';

function micro(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

function second(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

async function ok(p: Promise<{ status: number; text: string }>, what: string): Promise<void> {
  const r = await p;
  assert.ok(r.status === 200 || r.status === 201, `${what}: ${r.status} ${r.text}`);
}

/** Workload writes events through both APIs and bumps them, remembering each event's final count. */
export class Workload {
  readonly counts = new Map<string, number>();
  constructor(private readonly base: string) {}

  async core(name: string, ns = 'app', type = 'Normal', reason = 'Pulled'): Promise<void> {
    const path = `/api/v1/namespaces/${ns}/events`;
    await ok(request(this.base, 'POST', path, legacyEvent({ name, namespace: ns, object: `${name}-pod`, reason, message: `${reason} for ${name}`, type, firstAgo: 5, lastAgo: 5 })), `create ${name}`);
    this.counts.set(`${ns}/${name}`, 1);
  }

  async bumpCore(name: string): Promise<void> {
    const n = this.counts.get(`app/${name}`)! + 1;
    await ok(request(this.base, 'PATCH', `${CORE}/${name}`, { count: n, lastTimestamp: second(Date.now()) }, { 'Content-Type': 'application/merge-patch+json' }), `bump ${name}`);
    this.counts.set(`app/${name}`, n);
  }

  async v1(name: string): Promise<void> {
    await ok(request(this.base, 'POST', V1, newApiEvent({ name, namespace: 'app', object: `${name}-pod`, reason: 'Scheduled', action: 'Binding', note: `scheduled ${name}`, eventAgo: 5 })), `create ${name}`);
    this.counts.set(`app/${name}`, 1);
  }

  async bumpSeries(name: string): Promise<void> {
    const n = (this.counts.get(`app/${name}`) === 1 ? 1 : this.counts.get(`app/${name}`)!) + 1;
    await ok(request(this.base, 'PATCH', `${V1}/${name}`, { series: { count: n, lastObservedTime: micro(Date.now()) } }, { 'Content-Type': 'application/merge-patch+json' }), `series ${name}`);
    this.counts.set(`app/${name}`, n);
  }

  /**
   * opening is how every export test begins: a Warning (`app/crash`, BackOff)
   * bumped `bumps` times, an event in kube-system (which the tests' routes
   * drop), and rounds 0 to 2.
   */
  async opening(bumps: number): Promise<void> {
    await this.core('crash', 'app', 'Warning', 'BackOff');
    for (let i = 0; i < bumps; i++) await this.bumpCore('crash');
    await this.core('dropped', 'kube-system');
    for (let i = 0; i < 3; i++) await this.round(i);
  }

  /** round creates two events per API and bumps every event so far once. */
  async round(i: number): Promise<void> {
    await this.core(`core-${i}`);
    await this.v1(`v1-${i}`);
    for (const key of [...this.counts.keys()]) {
      const name = key.split('/')[1]!;
      if (!key.startsWith('app/')) continue;
      if (name.startsWith('core-')) await this.bumpCore(name);
      else if (name.startsWith('v1-')) await this.bumpSeries(name);
    }
  }
}


/** archiveChanges reads every occurrence of the archive outside kube-system: the ids an occurrences sink must hold, the events, and each event's final count. */
export async function archiveChanges(base: string): Promise<{ changeIds: string[]; events: Set<string>; finalCount: Map<string, number> }> {
  const occurrences: any[] = [];
  let cont = '';
  do {
    const r = await request(base, 'GET', `${OCCURRENCES}?limit=500${cont === '' ? '' : `&continue=${cont}`}`);
    assert.equal(r.status, 200, r.text);
    occurrences.push(...r.json.items);
    cont = r.json.metadata.continue ?? '';
  } while (cont !== '');
  const routed = occurrences.filter((o) => o.metadata.namespace !== 'kube-system');
  const changeIds = routed.map((o) => `${o.event.uid}.${String(o.metadata.name).split('.').at(-1)}`).sort();
  const events = new Set<string>(routed.map((o) => o.event.uid));
  const finalCount = new Map<string, number>();
  for (const o of routed) finalCount.set(o.event.uid, Math.max(finalCount.get(o.event.uid) ?? 0, o.countAfter));
  return { changeIds, events, finalCount };
}
