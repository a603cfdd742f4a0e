import { after, before, describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Incident, IncidentObjectList } from '../src/api/index.js';
import { startControlPlane } from './support/control-plane.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { simpleCommandWords } from './support/posix-command.js';
import type { ControlPlane } from './support/control-plane.js';
import { REAL_NODE_TAINT, realNodeUnavailable, startRealNode } from './support/real-node.js';
import type { RealNode } from './support/real-node.js';
import { allOccurrences, expectedHistories, histories, historyDiffs } from './support/archive-check.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { startWitness } from './support/source-witness.js';
import type { SourceWitness } from './support/source-witness.js';
import { until } from './support/wait.js';

/**
 * Incidents from what a real kubelet (v1.33, with Debian's containerd and runc) writes, archived by
 * `kevents serve --mirror` from the real kube-apiserver it registered with: each failure made as a user
 * makes it, on a hostNetwork pod of the tainted node `real-1`, with the imported busybox image (or an
 * empty docker-registry on 127.0.0.1 for a tag that does not exist). Nothing leaves loopback.
 *
 * Where the machine cannot run the node (not root, no containerd, no kubelet built), every case is
 * skipped with the reason, never passed.
 */

const UNAVAILABLE = realNodeUnavailable();

/** MAIN is every test pod's one container, so `fieldPath` reads spec.containers{main}. */
const MAIN = 'main';

interface SourceEvent {
  reason?: string;
  message?: string;
  type?: string;
  eventTime?: string | null;
  firstTimestamp?: string | null;
  involvedObject: { kind?: string; name?: string; fieldPath?: string };
  source?: { component?: string; host?: string };
}

describe('incidents from a real kubelet', { timeout: 1_200_000, skip: UNAVAILABLE ?? false }, () => {
  let cp: ControlPlane | undefined;
  let node: RealNode | undefined;
  let archive: ServerProcess | undefined;
  let witness: SourceWitness | undefined;
  let dir = '';
  /** notRunning says why the node did not start on a machine that passed realNodeUnavailable (the cases skip with it). */
  let notRunning: string | undefined;

  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await cp!.request(method, path, body);
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };

  /** namespace makes a namespace and its default ServiceAccount (no controller-manager runs to make it). */
  const namespace = async (name: string): Promise<void> => {
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await api('POST', `/api/v1/namespaces/${name}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  };

  /** pod runs one container `main` on the real node; the spec's container fields and extra pod fields are merged in. */
  const pod = async (ns: string, name: string, container: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> => {
    await api('POST', `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName: node!.name,
        hostNetwork: true,
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 1,
        tolerations: [{ key: REAL_NODE_TAINT.key, operator: 'Equal', value: REAL_NODE_TAINT.value, effect: REAL_NODE_TAINT.effect }],
        containers: [{ name: MAIN, image: node!.busybox, imagePullPolicy: 'Never', command: ['sleep', '3600'], ...container }],
        ...extra,
      },
    });
  };

  const sourceEvents = async (ns: string): Promise<SourceEvent[]> => (await api('GET', `/api/v1/namespaces/${ns}/events`)).items as SourceEvent[];

  /** firstSeen is the earliest first time, in the API server, of a namespace's events of these reasons. */
  const firstSeen = async (ns: string, reasons: string[]): Promise<string> => {
    const times = (await sourceEvents(ns))
      .filter((e) => reasons.includes(e.reason ?? ''))
      .map((e) => Date.parse(e.eventTime ?? e.firstTimestamp ?? ''))
      .filter((ms) => !Number.isNaN(ms));
    assert.ok(times.length > 0, `no ${reasons.join('/')} event in ${ns}`);
    return new Date(Math.min(...times)).toISOString().replace('.000Z', 'Z');
  };

  const incidents = async (ns: string): Promise<Incident[]> => {
    const res = await fetch(`${archive!.url}/apis/archive.kevents.io/v1alpha1/namespaces/${ns}/incidents?since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as IncidentObjectList).items.map((i) => i.status);
  };

  /** incidentWhen polls the namespace's incidents until one satisfies `ready`; a timeout shows the kubelet's events. */
  const incidentWhen = async (ns: string, ready: (i: Incident) => boolean): Promise<Incident> => {
    let last: Incident[] = [];
    try {
      await until(`an incident in ${ns}`, async () => {
        last = await incidents(ns);
        return last.some(ready);
      }, 240_000, 1_000);
    } catch (e) {
      const events = (await sourceEvents(ns)).map((x) => `${x.type} ${x.involvedObject.kind}/${x.involvedObject.name} ${x.involvedObject.fieldPath ?? ''} ${x.reason}: ${x.message ?? ''}`);
      throw new Error(`${String(e)}\nincidents: ${JSON.stringify(last, null, 1)}\nsource events:\n${events.join('\n')}\n${node!.logs()}`);
    }
    return last.find(ready)!;
  };

  /** running skips a case (with the reason) when the node did not start. */
  const running = (t: TestContext): boolean => {
    if (notRunning === undefined) return true;
    t.skip(notRunning);
    return false;
  };

  /**
   * assertFromKubelet checks that the incident's evidence is the kubelet's own, from node real-1, and shows its
   * words in the test's output (the table cases in src/diagnosis/catalogue-cases.ts are made from them).
   */
  const assertFromKubelet = async (t: TestContext, ns: string, reasons: string[]): Promise<void> => {
    const events = (await sourceEvents(ns)).filter((e) => reasons.includes(e.reason ?? ''));
    assert.ok(events.length > 0, `no ${reasons.join('/')} event`);
    for (const e of events) {
      assert.deepEqual(e.source, { component: 'kubelet', host: node!.name }, JSON.stringify(e));
      assert.equal((e as { reportingComponent?: string }).reportingComponent, 'kubelet', JSON.stringify(e));
      t.diagnostic(`${e.type ?? ''} ${e.reason ?? ''} ${JSON.stringify(e.message ?? '')}`);
    }
  };

  before(async () => {
    cp = await startControlPlane({});
    witness = startWitness(cp, (await cp.request('GET', '/api/v1/events?limit=1')).json.metadata.resourceVersion as string);
    try {
      node = await startRealNode(cp);
    } catch (err) {
      notRunning = String(err).split('\n')[0];
      process.stderr.write(`incidents-kubelet: ${String(err)}\n`);
      return;
    }
    dir = mkdtempSync(join(tmpdir(), 'kevents-incidents-kubelet-'));
    archive = await startServer(['--storage', `sqlite:${join(dir, 'archive.db')}`, '--event-ttl', '0', '--mirror', cp.kubeconfigFile(), '--cluster', 'lab', '--log-level', 'warn']);

    // Every case starts at once, so the file waits for the kubelet's back-offs once, not for each in turn.
    await namespace('crash');
    await pod('crash', 'crash', { command: ['sh', '-c', 'exit 1'] });
    await namespace('mount');
    await pod('mount', 'mount', { volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }, { volumes: [{ name: 'cfg', configMap: { name: 'does-not-exist' } }] });
    await namespace('config');
    await api('POST', '/api/v1/namespaces/config/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { user: 'app' } });
    await pod('config', 'config', { env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'nokey' } } }] });
    await namespace('never');
    await pod('never', 'never', { image: 'kevents.local/absent:1' });
    await namespace('command');
    await pod('command', 'command', { command: ['wge', 'http://127.0.0.1:1/'] });
    // Named hog, not oom: the test reads the namespace's events for any word of an OOM kill.
    await namespace('hog');
    // A shell doubling a string runs into its memory limit within a second; the kernel kills it (exit 137).
    await pod('hog', 'hog', { command: ['sh', '-c', 'a=x; while :; do a=$a$a; done'], resources: { requests: { memory: '16Mi' }, limits: { memory: '16Mi' } } });
    await namespace('probe');
    await pod('probe', 'probe', { livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 2, failureThreshold: 1 } });
    if (node.registry !== undefined) {
      await namespace('image');
      await pod('image', 'image', { image: `${node.registry}/absent:1`, imagePullPolicy: 'Always' });
    }
    if (node.lockedRegistry !== undefined) {
      await namespace('denied');
      await pod('denied', 'denied', { image: `${node.lockedRegistry}/private:1`, imagePullPolicy: 'Always' });
    }
  });

  after(async () => {
    witness?.stop();
    await archive?.stop();
    await node?.stop();
    await cp?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('node real-1 registered itself tainted, and its own events say kubelet', async (t) => {
    if (!running(t)) return;
    const n = await api('GET', '/api/v1/nodes/real-1');
    assert.ok((n.spec.taints as { key: string }[]).some((x) => x.key === REAL_NODE_TAINT.key), JSON.stringify(n.spec.taints));
    await until('the node\'s Starting event', async () => (await sourceEvents('default')).some((e) => e.reason === 'Starting' && e.source?.component === 'kubelet'), 60_000, 500);
  });

  it('a container that exits 1 is crash-loop, rooted at its pod, from the kubelet\'s BackOff', async (t) => {
    if (!running(t)) return;
    const i = await incidentWhen('crash', (x) => x.kind === 'crash-loop');
    assert.equal(i.root, 'Pod/crash');
    assert.equal(i.namespace, 'crash');
    assert.equal(i.cluster, 'lab');
    assert.equal(i.facts.container, MAIN);
    assert.match(i.cause, /crash/i);
    assert.ok(i.hints.some((h) => h.command.includes('kubectl logs') && h.command.includes('--previous') && h.command.includes('-n crash')), JSON.stringify(i.hints));
    assert.ok(i.evidence.some((r) => r.reason === 'BackOff'), JSON.stringify(i.evidence));
    assert.equal(i.start.time <= (await firstSeen('crash', ['BackOff'])), true, `${i.start.time}`);
    await assertFromKubelet(t, 'crash', ['BackOff']);
    const backOff = (await sourceEvents('crash')).find((e) => e.reason === 'BackOff')!;
    assert.equal(backOff.involvedObject.fieldPath, `spec.containers{${MAIN}}`);
    assert.equal(backOff.type, 'Warning');
    // The archive serves the kubelet's core/v1 event through events.k8s.io/v1 as kube-apiserver does.
    const res = await fetch(`${archive!.url}/apis/events.k8s.io/v1/namespaces/crash/events`);
    assert.equal(res.status, 200);
    const archived = ((await res.json()) as { items: { reason?: string; reportingController?: string; reportingInstance?: string; regarding?: { fieldPath?: string } }[] }).items.find((e) => e.reason === 'BackOff');
    assert.ok(archived, 'the archive holds the BackOff');
    assert.equal(archived.reportingController, 'kubelet');
    assert.equal(archived.regarding?.fieldPath, `spec.containers{${MAIN}}`);
  });

  it('a ConfigMap volume that does not exist is mount-missing-source with the volume and the ConfigMap', async (t) => {
    if (!running(t)) return;
    const i = await incidentWhen('mount', (x) => x.kind === 'mount-missing-source');
    assert.equal(i.root, 'Pod/mount');
    assert.equal(i.facts.volume, 'cfg');
    assert.equal(i.facts.sourceKind, 'ConfigMap');
    assert.equal(i.facts.source, 'does-not-exist');
    assert.ok(i.hints.some((h) => h.command.includes('does-not-exist') && h.command.includes('-n mount')), JSON.stringify(i.hints));
    assert.equal(i.start.time, await firstSeen('mount', ['FailedMount']));
    assert.equal(i.ongoing, true);
    await assertFromKubelet(t, 'mount', ['FailedMount']);
  });

  it('a Secret key missing from env is config-missing (the kubelet\'s CreateContainerConfigError) with the key and the Secret', async (t) => {
    if (!running(t)) return;
    const i = await incidentWhen('config', (x) => x.kind === 'config-missing');
    assert.equal(i.root, 'Pod/config');
    assert.equal(i.facts.key, 'nokey');
    assert.equal(i.facts.source, 'creds');
    assert.equal(i.facts.sourceKind, 'Secret');
    assert.equal(i.facts.container, MAIN);
    assert.ok(i.hints.some((h) => h.command.includes('creds') && h.command.includes('-n config')), JSON.stringify(i.hints));
    assert.equal(i.start.time, await firstSeen('config', ['Failed']));
    await assertFromKubelet(t, 'config', ['Failed']);
  });

  it('an image absent from the node with pull policy Never is image-invalid (never-pull) with the image', async (t) => {
    if (!running(t)) return;
    const i = await incidentWhen('never', (x) => x.kind === 'image-invalid');
    assert.equal(i.root, 'Pod/never');
    assert.equal(i.facts.image, 'kevents.local/absent:1');
    assert.equal(i.facts.problem, 'never-pull');
    assert.equal(i.start.time, await firstSeen('never', ['ErrImageNeverPull']));
    await assertFromKubelet(t, 'never', ['ErrImageNeverPull']);
  });

  const pulls = [
    { ns: 'image', what: 'a tag the local registry lacks', kind: 'image-not-found', registry: () => node!.registry, path: 'absent:1', missing: 'docker-registry is not installed (apt-get install docker-registry)' },
    { ns: 'denied', what: 'a registry that answers 401 to the node', kind: 'image-pull-denied', registry: () => node!.lockedRegistry, path: 'private:1', missing: 'docker-registry or a bcrypt hasher (python3 crypt) is missing' },
  ];
  for (const p of pulls) {
    it(`${p.what} is ${p.kind} with the image, its ErrImagePull and pull back-off one incident with it`, async (t) => {
      if (!running(t)) return;
      const registry = p.registry();
      if (registry === undefined) {
        t.skip(p.missing);
        return;
      }
      const i = await incidentWhen(p.ns, (x) => x.kind === p.kind);
      assert.equal(i.root, `Pod/${p.ns}`);
      assert.equal(i.facts.image, `${registry}/${p.path}`);
      assert.equal((await incidents(p.ns)).length, 1, 'ErrImagePull and ImagePullBackOff join the pull\'s cause');
      assert.equal(i.start.time <= (await firstSeen(p.ns, ['Failed'])), true, i.start.time);
      await assertFromKubelet(t, p.ns, ['Failed']);
    });
  }

  it('a command not in the image is start-error with the command and the container', async (t) => {
    if (!running(t)) return;
    const i = await incidentWhen('command', (x) => x.kind === 'start-error');
    assert.equal(i.root, 'Pod/command');
    assert.equal(i.facts.command, 'wge');
    assert.equal(i.facts.problem, 'not-found');
    assert.equal(i.facts.container, MAIN);
    await assertFromKubelet(t, 'command', ['Failed']);
  });

  it('an OOM kill, which the kubelet records in the pod\'s status and in no event, is a crash loop whose step reads OOMKilled', async (t) => {
    if (!running(t)) return;
    const i = await incidentWhen('hog', (x) => x.kind === 'crash-loop');
    assert.equal(i.root, 'Pod/hog');
    assert.match(i.cause, /events do not record why/);
    const events = await sourceEvents('hog');
    assert.ok(!events.some((e) => /oom|memory/i.test(`${e.reason ?? ''} ${e.message ?? ''}`)), events.map((e) => `${e.reason}: ${e.message}`).join('\n'));
    const step = i.hints.find((h) => h.command.includes('lastState'));
    assert.ok(step, JSON.stringify(i.hints));
    const kubectl = findKubectls().at(-1);
    assert.ok(kubectl, 'kubectl is installed');
    // The step, run as the user pastes it, shows what the events could not: the kernel's OOM kill.
    // The kubelet writes the pod's status apart from its events: the last state may lag the BackOff a moment.
    let out = '';
    await until('the step shows the OOM kill', async () => {
      const r = await runKubectl(kubectl, cp!.url, simpleCommandWords(step.command).slice(1), { kubeconfig: cp!.kubeconfigFile() });
      assert.equal(r.code, 0, r.stderr);
      out = r.stdout;
      return /^main: OOMKilled exit 137$/m.test(out);
    }, 60_000, 1_000).catch((e: unknown) => {
      throw new Error(`${String(e)}: ${out}`);
    });
    await assertFromKubelet(t, 'hog', ['BackOff']);
  });

  it('an exec liveness probe that fails is probe-liveness with its output, the kubelet\'s Killing joined to it', async (t) => {
    if (!running(t)) return;
    const i = await incidentWhen('probe', (x) => x.kind === 'probe-liveness');
    assert.equal(i.root, 'Pod/probe');
    assert.equal(i.facts.probe, 'liveness');
    assert.match(i.facts.output ?? '', /can't open '\/tmp\/healthy'/);
    assert.equal((await incidents('probe')).length, 1, JSON.stringify(await incidents('probe'), null, 1));
    await assertFromKubelet(t, 'probe', ['Unhealthy', 'Killing']);
  });

  it("the crash loop's count bumps, as the kubelet writes them, are archived as occurrences, none lost or invented (against a watch of kube-apiserver)", async (t) => {
    if (!running(t)) return;
    // Minutes of restarts: the kubelet's back-off doubles from 10 s (10, 20, 40, 80 s), and each restart bumps Pulled,
    // Created, Started and BackOff; five starts take about two and a half minutes.
    const counts = async (): Promise<Map<string, number>> => new Map((await sourceEvents('crash')).map((e) => [e.reason ?? '', (e as { count?: number }).count ?? 0]));
    await until('the crash loop started five times', async () => ((await counts()).get('Started') ?? 0) >= 5 && ((await counts()).get('BackOff') ?? 0) >= 4, 420_000, 1_000);
    // The pod stops, so its events stop changing and the archive can be compared with the watch at rest.
    await api('DELETE', '/api/v1/namespaces/crash/pods/crash?gracePeriodSeconds=0');
    const uids = new Set((await sourceEvents('crash')).map((e) => (e as { metadata?: { uid?: string } }).metadata?.uid ?? ''));
    let last = '';
    try {
      await until('the archive holds every change the watch saw of the crash loop\'s events', async () => {
        const crash = witness!.versions.filter((v) => v.metadata.namespace === 'crash');
        const want = expectedHistories(crash);
        const have = new Map([...histories((await allOccurrences(archive!.url)).filter((o: { event: { namespace: string } }) => o.event.namespace === 'crash'))]);
        last = historyDiffs(want, have);
        return [...uids].every((uid) => want.has(uid)) && [...want].every(([uid, c]) => JSON.stringify(have.get(uid)) === JSON.stringify(c)) && have.size === want.size;
      }, 120_000, 500);
    } catch (e) {
      throw new Error(`${(e as Error).message}: ${last}`);
    }
    const backOff = witness!.versions.filter((v) => v.metadata.namespace === 'crash' && v.reason === 'BackOff');
    assert.ok(backOff.length >= 4, `${backOff.length} versions of BackOff`);
    assert.ok(backOff.every((v) => v.series === undefined), 'a core/v1 kubelet event carries count, not series');
    // The recorder model (client-go's correlator, as src/recorder has it): a repeat patches the one event, count up
    // by one, firstTimestamp kept, lastTimestamp moved on; nothing here is spam-filtered, so no count is skipped.
    const byUid = new Map<string, typeof backOff>();
    for (const v of witness!.versions.filter((x) => x.metadata.namespace === 'crash' && x.source?.component === 'kubelet')) {
      const uid = v.metadata.uid ?? '';
      byUid.set(uid, [...(byUid.get(uid) ?? []), v]);
    }
    for (const [uid, vs] of byUid) {
      const what = `${vs[0]!.reason ?? ''} (${uid})`;
      assert.deepEqual(vs.map((v) => v.count), vs.map((_, i) => i + 1), `${what}: counts as watched`);
      assert.ok(vs.every((v) => v.firstTimestamp === vs[0]!.firstTimestamp && v.metadata.name === vs[0]!.metadata.name), `${what}: one event, its first time kept`);
      assert.ok(vs.every((v, i) => i === 0 || Date.parse(v.lastTimestamp ?? '') >= Date.parse(vs[i - 1]!.lastTimestamp ?? '')), `${what}: lastTimestamp never goes back`);
    }
    t.diagnostic(`BackOff versions watched: ${backOff.map((v) => v.count).join(', ')}`);
  });
});
