import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CoreEvent, Incident } from '../api/index.js';
import { eventFirstMs } from '../api/index.js';
import { T0, testEvent } from '../../test/support/timeline-events.js';
import { CATALOGUE_CASES, caseEvent } from '../../test/support/catalogue-cases.js';
import type { CatalogueCase } from '../../test/support/catalogue-cases.js';
import { classify, FAILURE_EVENTS } from './catalogue.js';
import { buildIncidents } from './incidents.js';

/**
 * The incidents' rules as properties: stories made from the catalogue's table
 * cases (each with its kind, root and start), several at once in their own
 * namespaces, among unrecognised Warnings and healthy Normal events, read
 * through random windows.
 */

const STORY_CASES = CATALOGUE_CASES.filter((c): c is CatalogueCase & { want: string } => c.want !== undefined);

/** STRAY_REASONS are Warnings no kind reads, as `kevents record` or an operator writes them. */
const STRAY_REASONS = ['RolloutStuck', 'BackupFailed', 'CertificateExpiring', 'ReconcileError'];

const SPAN_S = 3600;

interface StorySpec {
  index: number;
  /** times are the seconds after T0 the case's event was seen, each a separate event. */
  times: number[];
  /** stray is the time of an unrecognised Warning on the story's own object, if any. */
  stray: number | undefined;
  strayReason: number;
}

interface Story {
  case: CatalogueCase & { want: string };
  namespace: string;
  events: CoreEvent[];
  stray: CoreEvent[];
  root: string;
  /** rootNamespace is the incident's namespace: '' for a node's. */
  rootNamespace: string;
}

function story(spec: StorySpec, n: number): Story {
  const c = STORY_CASES[spec.index]!;
  const namespace = `ns-${n}`;
  // Each story has its own node names, so that two stories never share a node's incident.
  const own = (name: string | undefined): string | undefined => (name === undefined ? undefined : `${name}-s${n}`);
  const events = spec.times.map((t, k) => {
    const e = caseEvent({ ...c, ...(c.kind === 'Node' ? { object: own(c.object) } : {}), ...(c.host !== undefined ? { host: own(c.host) } : {}) }, namespace);
    const first = new Date(T0 + t * 1000).toISOString().replace('.000Z', 'Z');
    // A readiness probe failing more often than a warm-up (WARM_UP_READINESS_FAILURES) is an incident.
    return { ...e, metadata: { ...e.metadata, name: `${e.metadata.name}-${k}`, uid: `${e.metadata.uid}-${k}` }, firstTimestamp: first, lastTimestamp: first, count: 5 };
  });
  const e0 = events[0]!;
  const m = classify(e0)!;
  const node = m.kind.subject === 'node' ? m.facts.node : undefined;
  const root = node !== undefined && node !== '' ? `Node/${node}` : `${e0.involvedObject.kind}/${e0.involvedObject.name}`;
  const stray =
    spec.stray === undefined
      ? []
      : [
          testEvent({
            name: `stray-${n}`,
            namespace,
            kind: e0.involvedObject.kind,
            object: e0.involvedObject.name ?? '',
            reason: STRAY_REASONS[spec.strayReason % STRAY_REASONS.length]!,
            type: 'Warning',
            component: 'kevents-record',
            message: 'rollout has not progressed',
            first: spec.stray,
          }),
        ];
  return { case: c, namespace, events, stray, root, rootNamespace: root.startsWith('Node/') ? '' : namespace };
}

/** noise is healthy Normal events and unrecognised Warnings on other objects of a story's namespace. */
function noise(namespace: string, k: number, t: number, warning: boolean): CoreEvent[] {
  const pod = `noise-${k}-7f9c6-abcde`;
  const at = { first: t, namespace };
  const out = [
    testEvent({ name: `n-${namespace}-${k}-a`, kind: 'Deployment', object: `noise-${k}`, reason: 'ScalingReplicaSet', message: `Scaled up replica set noise-${k}-7f9c6 to 1`, component: 'deployment-controller', ...at }),
    testEvent({ name: `n-${namespace}-${k}-b`, kind: 'ReplicaSet', object: `noise-${k}-7f9c6`, reason: 'SuccessfulCreate', message: `Created pod: ${pod}`, component: 'replicaset-controller', ...at }),
    testEvent({ name: `n-${namespace}-${k}-c`, object: pod, reason: 'Scheduled', message: `Successfully assigned ${namespace}/${pod} to node-n${k}`, component: 'default-scheduler', ...at }),
    testEvent({ name: `n-${namespace}-${k}-d`, object: pod, reason: 'Pulled', fieldPath: 'spec.containers{app}', host: `node-n${k}`, message: 'Container image "nginx:1.27" already present on machine', ...at }),
    testEvent({ name: `n-${namespace}-${k}-e`, object: pod, reason: 'Started', fieldPath: 'spec.containers{app}', host: `node-n${k}`, message: 'Started container app', ...at }),
  ];
  if (warning) out.push(testEvent({ name: `n-${namespace}-${k}-w`, kind: 'Deployment', object: `noise-${k}`, reason: 'RolloutStuck', type: 'Warning', message: 'rollout has not progressed', ...at }));
  return out;
}

const storySpec = fc.record({
  index: fc.nat({ max: STORY_CASES.length - 1 }),
  times: fc.uniqueArray(fc.integer({ min: 0, max: SPAN_S - 1 }), { minLength: 1, maxLength: 3 }),
  stray: fc.option(fc.integer({ min: 0, max: SPAN_S - 1 }), { nil: undefined }),
  strayReason: fc.nat(),
});
const noiseSpec = fc.array(fc.record({ story: fc.nat(), t: fc.integer({ min: 0, max: SPAN_S - 1 }), warning: fc.boolean() }), { maxLength: 4 });
const windowSpec = fc.record({ since: fc.integer({ min: -600, max: SPAN_S }), length: fc.integer({ min: 60, max: 2 * SPAN_S }) });

function incidentAt(incidents: readonly Incident[], s: Story): Incident | undefined {
  return incidents.find((i) => i.root === s.root && i.namespace === s.rootNamespace);
}

/** check runs the properties over one generated world, and says which failed. */
function check(specs: StorySpec[], noises: { story: number; t: number; warning: boolean }[], w: { since: number; length: number }): void {
  const stories = specs.map(story);
  const all = stories.flatMap((s) => [...s.events, ...s.stray]).concat(noises.flatMap((x, k) => noise(stories[x.story % stories.length]!.namespace, k, x.t, x.warning)));
  const window = { since: T0 + w.since * 1000, until: T0 + (w.since + w.length) * 1000 };
  const mixed = buildIncidents({ events: all, ...window }).incidents;

  for (const i of mixed) {
    assert.doesNotMatch(i.cause, /""/, i.cause);
    for (const h of i.hints) {
      assert.doesNotMatch(h.command, /''|""/, h.command);
      assert.doesNotMatch(h.why, /""/, h.why);
    }
  }

  for (const s of stories) {
    const inWindow = s.events.map((e) => eventFirstMs(e)!).filter((ms) => ms >= window.since && ms < window.until);
    if (inWindow.length === 0) continue;
    const alone = buildIncidents({ events: s.events, ...window }).incidents;
    assert.equal(alone.length, 1, `${s.case.name}: one incident alone, got ${JSON.stringify(alone.map((i) => [i.root, i.kind]))}`);
    const one = alone[0]!;
    assert.equal(one.kind, s.case.want, `${s.case.name}: its kind alone`);
    assert.equal(one.root, s.root, `${s.case.name}: its root alone`);
    const found = incidentAt(mixed, s);
    assert.ok(found !== undefined, `${s.case.name}: an incident at ${s.root} mixed, got ${JSON.stringify(mixed.map((i) => [i.namespace, i.root, i.kind]))}`);
    // A catalogued cause outranks an unrecognised Warning on the same root.
    assert.equal(found.kind, one.kind, `${s.case.name}: the same kind mixed as alone`);
    if (s.case.want !== 'other') {
      assert.ok(Date.parse(found.start.time) <= Math.min(...inWindow), `${s.case.name}: start ${found.start.time} after its first failing event`);
      assert.deepEqual(found.start, one.start, `${s.case.name}: the same start mixed as alone`);
      assert.equal(found.cause, one.cause, `${s.case.name}: the same cause mixed as alone`);
    }
  }
}

describe('incidents, as properties over generated stories', () => {
  it('no kind reads the stray reasons', () => {
    for (const r of STRAY_REASONS) assert.ok(!FAILURE_EVENTS.reasons.includes(r), r);
  });

  it("each story's kind, root and start are the same alone and mixed, whatever the window; no empty quotes; start ≤ first failing event", () => {
    fc.assert(
      fc.property(fc.array(storySpec, { minLength: 1, maxLength: 5 }), noiseSpec, windowSpec, (specs, noises, w) => check(specs, noises, w)),
      { numRuns: 300 },
    );
  });

  it('every table case, with an unrecognised Warning on its object after it, keeps its kind', () => {
    for (let index = 0; index < STORY_CASES.length; index++) check([{ index, times: [100], stray: 200, strayReason: 0 }], [], { since: 0, length: SPAN_S });
  });
});
