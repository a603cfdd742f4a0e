import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../api/index.js';
import type { LabView } from './exercise.js';
import { EXERCISES, EXERCISES_REAL_NODE, exercisesOf, findExercise } from './exercises.js';
import { fromKubeletOn, kubeletReal } from './exercises/kubelet-real.js';
import type { LabState } from './lab-state.js';
import { REAL_NODE_TAINT } from './lab-state.js';
import { containerdConfig, formatTaint, kubeletConfig } from './real-node-config.js';
import { findRealNode, realNodeHostUnavailable } from './real-node-find.js';
import { realNodeDir, realNodeDirProblem } from './real-node.js';

function event(over: Partial<CoreEvent> & { pod?: string }): CoreEvent {
  const { pod = 'crashy', ...rest } = over;
  return { metadata: { name: `${pod}.1`, namespace: 'lab' }, involvedObject: { kind: 'Pod', name: pod, namespace: 'lab' }, type: 'Normal', reason: 'Started', source: { component: 'kubelet', host: 'real-1' }, ...rest };
}

function view(events: CoreEvent[], podsOnNode: string[]): LabView {
  const state = { namespace: 'lab', realNode: { name: 'real-1' } } as unknown as LabState;
  return {
    state,
    now: Date.now(),
    events: () => Promise.resolve(events),
    archiveEvents: () => Promise.resolve([]),
    audit: () => [],
    get: <T>() => Promise.resolve({ items: podsOnNode.map((name) => ({ metadata: { name } })) } as T),
    close: () => undefined,
  };
}

describe('the real node', () => {
  it('configures the kubelet with the taint and containerd with its own socket and the oom_score_adj restriction', () => {
    const kubelet = kubeletConfig({ dir: '/n', cgroupRoot: 'kevents-x', port: 10250, taint: REAL_NODE_TAINT });
    assert.match(kubelet, /registerWithTaints:\n- \{key: lab\.kevents\.dev\/real-node, value: "yes", effect: NoSchedule\}/);
    assert.match(kubelet, /cgroupRoot: \/kevents-x\n/);
    assert.match(kubelet, /containerRuntimeEndpoint: unix:\/\/\/n\/containerd\.sock/);
    const containerd = containerdConfig('/n', 'kevents.local/pause:3.10');
    assert.match(containerd, /address = "\/n\/containerd\.sock"/);
    assert.match(containerd, /restrict_oom_score_adj = true/);
    assert.match(containerd, /sandbox_image = "kevents\.local\/pause:3\.10"/);
    assert.equal(formatTaint(REAL_NODE_TAINT), 'lab.kevents.dev/real-node=yes:NoSchedule');
  });

  it('refuses a lab folder too long for the node\'s unix sockets', () => {
    assert.equal(realNodeDir('/root/.kevents/lab'), '/root/.kevents/lab/real-node');
    assert.equal(realNodeDirProblem(realNodeDir('/root/.kevents/lab')), undefined);
    const long = realNodeDir(`/tmp/${'d'.repeat(60)}`);
    assert.match(realNodeDirProblem(long) ?? '', /^the node's folder \/tmp\/d+\/real-node is too long for its sockets \(.*kubelet\/pod-resources\/kubelet\.sock has 110 bytes, a unix socket at most 107\): use a shorter --dir$/);
  });

  it('says in one line why it cannot run: not root, then the first program missing, then the kubelet and the images', () => {
    assert.match(realNodeHostUnavailable('/usr/bin:/bin', 1000) ?? '', /^the kubelet and containerd need root/);
    assert.equal(realNodeHostUnavailable('/nonexistent', 0), 'containerd is not installed (apt-get install containerd)');
    const host = realNodeHostUnavailable(process.env.PATH);
    if (host !== undefined) return;
    const cache = mkdtempSync(join(tmpdir(), 'kevents-real-node-'));
    try {
      const r = findRealNode({ path: '', binDir: undefined, cacheDir: cache });
      assert.ok('unavailable' in r);
      assert.match(r.unavailable, /^containerd is not installed/);
      const withPath = findRealNode({ path: process.env.PATH!.split(':').filter((d) => !d.includes('kevents-peers')).join(':'), binDir: join(cache, 'none'), cacheDir: cache });
      assert.ok('unavailable' in withPath);
      assert.match(withPath.unavailable, /^no kubelet found in --bin-dir, on PATH or in .*kubernetes-v1\.33\.\d+-stamped\/bin/);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

describe('exercise 6 with a real node', () => {
  it('replaces the simulated exercise 6 only', () => {
    assert.equal(exercisesOf(false), EXERCISES);
    assert.deepEqual(EXERCISES_REAL_NODE.map((e) => e.number), [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(findExercise('6', exercisesOf(true))?.title, 'The kubelet\'s reasons (real)');
    assert.equal(findExercise('6')?.title, 'The kubelet\'s reasons (simulated)');
    for (let n = 1; n <= 7; n++) if (n !== 6) assert.equal(findExercise(String(n), exercisesOf(true)), findExercise(String(n)));
  });

  it('counts as the kubelet\'s only an event about a pod from the kubelet of that node', () => {
    const cases: [string, CoreEvent, boolean][] = [
      ['core/v1 source', event({}), true],
      ['reportingComponent and instance', event({ source: {}, reportingComponent: 'kubelet', reportingInstance: 'real-1' }), true],
      ['kwok\'s simulation', event({ source: { component: 'kwok_controller' } }), false],
      ['another node\'s kubelet', event({ source: { component: 'kubelet', host: 'kwok-node-0' } }), false],
      ['not about a pod', event({ involvedObject: { kind: 'Node', name: 'real-1' } }), false],
    ];
    for (const [name, e, want] of cases) assert.equal(fromKubeletOn(e, 'real-1'), want, name);
  });

  it('checks a pod on the node through Created, Started and a Warning BackOff from its kubelet', async () => {
    const none = await kubeletReal.check(view([], []));
    assert.deepEqual(none.items.map((i) => i.ok), [false, false]);
    assert.match(none.items[0]!.text, /^no pod of namespace lab runs on real-1 yet/);
    const simulated = await kubeletReal.check(view(['Created', 'Started', 'BackOff'].map((reason) => event({ reason, type: reason === 'BackOff' ? 'Warning' : 'Normal', source: { component: 'kwok_controller' } })), ['crashy']));
    assert.deepEqual(simulated.items.map((i) => i.ok), [false, false]);
    assert.match(simulated.items[0]!.text, /^pod crashy on real-1 has no Created and Started from the kubelet yet/);
    const pullBackOff = await kubeletReal.check(view([event({ reason: 'Created' }), event({ reason: 'Started' }), event({ reason: 'BackOff', type: 'Normal', message: 'Back-off pulling image "x"' })], ['crashy']));
    assert.deepEqual(pullBackOff.items.map((i) => i.ok), [true, false]);
    const done = await kubeletReal.check(view([event({ reason: 'Created' }), event({ reason: 'Started' }), event({ reason: 'BackOff', type: 'Warning', message: 'Back-off restarting failed container main in pod crashy_lab(u)', count: 3 })], ['crashy']));
    assert.deepEqual(done.items.map((i) => i.ok), [true, true]);
    assert.deepEqual(done.notes, ['real: these events come from the kubelet on real-1 (source.component and reportingComponent kubelet), not from kwok_controller', 'the kubelet said: Back-off restarting failed container main in pod crashy_lab(u) (count 3)']);
  });

  it('prints a Pod that tolerates the node\'s taint, lands on it and runs its imported image', () => {
    const text = kubeletReal.task({ namespace: 'lab', nodes: { count: 3, cpu: '2', memory: '4Gi' }, eventTtl: '1h0m0s', realNode: { name: 'real-1', taint: REAL_NODE_TAINT, busybox: 'kevents.local/busybox:1.35' } });
    assert.match(text, /tolerations: \[\{ key: lab\.kevents\.dev\/real-node, operator: Exists, effect: NoSchedule \}\]/);
    assert.match(text, /nodeSelector: \{ kubernetes\.io\/hostname: real-1 \}/);
    assert.match(text, /image: kevents\.local\/busybox:1\.35\n\s+imagePullPolicy: Never/);
  });
});
