import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { covers } from './audit-log.js';
import type { AuditRecord } from './audit-log.js';
import { findBinaries, kubeBuildDir, missingBinariesMessage } from './binaries.js';
import { wrapperGoMod } from './build-binaries.js';
import { millicores } from './exercise.js';
import { EXERCISES, findExercise, formatCheck } from './exercises.js';
import { deploymentOfPod } from './exercises/scheduler.js';
import { kwokStagesYaml } from './kwok-stages.js';

function executable(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
}

describe('findBinaries', () => {
  it('looks in --bin-dir, then PATH, then the build cache, then kwokctl\'s cache, and names what is missing', () => {
    const root = mkdtempSync(join(tmpdir(), 'kevents-lab-bin-'));
    try {
      const bin = join(root, 'bin');
      const path = join(root, 'path');
      const cache = join(root, 'cache');
      const kwokCache = join(root, 'kwok-cache');
      executable(join(bin, 'kube-apiserver'));
      executable(join(path, 'kube-apiserver'));
      executable(join(path, 'etcd'));
      executable(join(kubeBuildDir(cache), 'bin', 'kube-scheduler'));
      executable(join(kwokCache, 'https', 'dl.k8s.io', 'release', 'v1.33.0', 'bin', 'linux', 'amd64', 'kube-controller-manager'));
      writeFileSync(join(path, 'kwok'), 'not executable');
      const r = findBinaries({ binDir: bin, path, cacheDir: cache, kwokCacheDir: kwokCache });
      assert.equal(r.found['kube-apiserver'], join(bin, 'kube-apiserver'));
      assert.equal(r.found.etcd, join(path, 'etcd'));
      assert.equal(r.found['kube-scheduler'], join(kubeBuildDir(cache), 'bin', 'kube-scheduler'));
      assert.match(r.found['kube-controller-manager'] ?? '', /kwok-cache\/.*\/kube-controller-manager$/);
      assert.deepEqual(r.missing, ['kwok']);
      const message = missingBinariesMessage(r.missing, { goFound: false, kwokctlFound: true, cacheDir: cache });
      assert.match(message, /^kevents lab runs real upstream programs; not found: kwok\./);
      assert.match(message, /--bin-dir DIR/);
      assert.match(message, /install Go 1\.24\+/);
      assert.match(message, /kwokctl create cluster --name kevents-fetch --runtime binary/);
      assert.doesNotMatch(message, /etcd-server/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('wrapperGoMod', () => {
  it('replaces every staging module at v0.0.0 with its published twin', () => {
    const upstream = 'module k8s.io/kubernetes\n\ngo 1.24.0\n\nrequire (\n\tk8s.io/api v0.0.0\n\tk8s.io/client-go v0.0.0\n\tgithub.com/x/y v1.2.3\n)\n';
    const mod = wrapperGoMod(upstream, 'v1.33.13');
    assert.match(mod, /^go 1\.24\.0$/m);
    assert.match(mod, /^require k8s\.io\/kubernetes v1\.33\.13$/m);
    assert.match(mod, /^\tk8s\.io\/api => k8s\.io\/api v0\.33\.13$/m);
    assert.match(mod, /^\tk8s\.io\/client-go => k8s\.io\/client-go v0\.33\.13$/m);
    assert.doesNotMatch(mod, /github\.com\/x\/y/);
    assert.throws(() => wrapperGoMod('module x\n'), /no staging modules/);
  });
});

describe('kwokStagesYaml', () => {
  it('is one kwok Stage per step, each with one event, the crash loop only for labelled pods', () => {
    const docs = parseAllDocuments(kwokStagesYaml()).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: { next: { event: { reason: string } }; selector: { matchExpressions: { key: string; values?: string[] }[] } } });
    assert.ok(docs.every((d) => d.kind === 'Stage'));
    assert.equal(new Set(docs.map((d) => d.metadata.name)).size, docs.length);
    assert.deepEqual(docs.map((d) => d.spec.next.event.reason), ['Pulling', 'Pulled', 'Created', 'Started', 'Started', 'Unhealthy', 'BackOff', 'Started', 'Killing']);
    const labelled = docs.filter((d) => d.spec.selector.matchExpressions.some((e) => e.key.includes('lab.kevents.dev/fail') && e.values?.[0] === 'true'));
    assert.deepEqual(labelled.map((d) => d.spec.next.event.reason), ['Started', 'Started', 'Unhealthy', 'BackOff', 'Started']);
  });
});

describe('covers', () => {
  const record = (uri: string, objectRef: AuditRecord['objectRef']): AuditRecord => ({ verb: 'list', requestURI: uri, user: { username: 'lab-admin' }, objectRef, requestReceivedTimestamp: '', stageTimestamp: '' });
  const event = { namespace: 'lab', name: 'demo.repeat', involvedObject: { kind: 'Widget', name: 'demo' }, type: 'Warning', reason: 'ReconcileFailed' };
  const cases: [string, AuditRecord, boolean][] = [
    ['a list of its namespace', record('/api/v1/namespaces/lab/events?limit=500', { namespace: 'lab' }), true],
    ['a list of all namespaces', record('/api/v1/events', {}), true],
    ['a list of another namespace', record('/api/v1/namespaces/default/events', { namespace: 'default' }), false],
    ['a get of its name', record('/api/v1/namespaces/lab/events/demo.repeat', { namespace: 'lab', name: 'demo.repeat' }), true],
    ['a get of another name', record('/api/v1/namespaces/lab/events/x', { namespace: 'lab', name: 'x' }), false],
    ['a list selecting its object', record('/api/v1/namespaces/lab/events?fieldSelector=involvedObject.kind%3DWidget%2CinvolvedObject.name%3Ddemo', { namespace: 'lab' }), true],
    ['a list selecting another type', record('/api/v1/namespaces/lab/events?fieldSelector=type%3DCritical', { namespace: 'lab' }), false],
    ['a list excluding its type', record('/api/v1/namespaces/lab/events?fieldSelector=type!%3DWarning', { namespace: 'lab' }), false],
    ['a list on a field the lab does not know', record('/api/v1/namespaces/lab/events?fieldSelector=source%3Dx', { namespace: 'lab' }), true],
  ];
  for (const [name, r, want] of cases) it(name, () => assert.equal(covers(r, event), want));
});

describe('exercises', () => {
  it('are numbered 1 to 7 and found by number only', () => {
    assert.deepEqual(EXERCISES.map((e) => e.number), [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(findExercise('5')?.number, 5);
    assert.equal(findExercise('8'), undefined);
    assert.equal(findExercise('1x'), undefined);
  });

  it('size the Deployment of exercise 5 from the nodes', () => {
    const text = findExercise('5')!.task({ namespace: 'lab', nodes: { count: 5, cpu: '4', memory: '8Gi' }, eventTtl: '1h0m0s' });
    assert.match(text, /replicas: 6/);
    assert.match(text, /cpu: 3000m/);
    assert.equal(millicores('1500m'), 1500);
    assert.equal(millicores('0.5'), 500);
  });

  it('name a pod\'s Deployment by its name', () => {
    assert.equal(deploymentOfPod('hog-6cffb64749-jsfnn'), 'hog');
    assert.equal(deploymentOfPod('my-app-7d9f8b6c5d-abcde'), 'my-app');
    assert.equal(deploymentOfPod('crashy'), undefined);
  });

  it('print a check as done and missing steps', () => {
    const e = findExercise('3')!;
    assert.equal(
      formatCheck(e, { items: [{ ok: true, text: 'stored' }, { ok: false, text: 'no listing' }], notes: ['a note'] }),
      'Exercise 3: A type outside the convention\n  done     stored\n  missing  no listing\n\na note\n\nExercise 3 is not done yet: 1 of 2 steps missing.\n',
    );
  });
});
