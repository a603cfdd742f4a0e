import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { findKubectls } from './support/kubectl.js';
import { CLI } from './support/server-process.js';

/**
 * deploy/ holds the manifests twice, as a kustomize base with two overlays and as a
 * Helm chart: the chart must render exactly what the overlays build (the Namespace
 * aside, which `helm install --create-namespace` makes). The manifests' own rules
 * (least privilege, non-root, read-only root filesystem, probes, requests) are
 * checked on what kustomize builds. Applying them to a real API server is in
 * test/cluster-mirror.test.ts.
 */

const root = new URL('..', import.meta.url).pathname;
const kubectl = findKubectls().at(-1)!;

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown };

function docs(text: string): Doc[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
}

const kustomize = (overlay: string): Doc[] => docs(execFileSync(kubectl.path, ['kustomize', `${root}deploy/kustomize/overlays/${overlay}`], { encoding: 'utf8' }));

let helmPath: string | undefined;
function helm(args: string[]): string {
  helmPath ??= execFileSync(process.execPath, [`${root}scripts/helm.mjs`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return execFileSync(helmPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const byKey = (list: Doc[]): Map<string, Doc> => new Map(list.map((d) => [`${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`, d]));

void describe('deploy/', () => {
  for (const overlay of ['sqlite', 'postgres']) {
    void it(`the Helm chart with archive.type=${overlay} renders what overlays/${overlay} builds`, () => {
      const fromKustomize = byKey(kustomize(overlay).filter((d) => d.kind !== 'Namespace'));
      const fromHelm = byKey(docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'kevents', '--set', `archive.type=${overlay}`])));
      assert.deepEqual([...fromHelm.keys()].sort(), [...fromKustomize.keys()].sort());
      for (const [key, doc] of fromKustomize) assert.deepEqual(fromHelm.get(key), doc, key);
    });
  }

  for (const overlay of ['sqlite', 'postgres']) {
    void it(`with monitoring.enabled the chart renders what overlays/${overlay} builds with components/monitoring`, () => {
      // The component as a user adds it to an overlay, in a kustomization of its own (paths relative: kustomize refuses absolute ones).
      const dir = mkdtempSync(join(tmpdir(), 'kevents-kustomize-'));
      try {
        const rel = (p: string): string => relative(dir, `${root}deploy/kustomize/${p}`);
        writeFileSync(
          join(dir, 'kustomization.yaml'),
          [
            'apiVersion: kustomize.config.k8s.io/v1beta1',
            'kind: Kustomization',
            'namespace: kevents',
            'labels:',
            '  - pairs: {app.kubernetes.io/name: kevents, app.kubernetes.io/part-of: kevents}',
            '    includeSelectors: false',
            `resources: [${rel(`overlays/${overlay}`)}]`,
            `components: [${rel('components/monitoring')}]`,
            '',
          ].join('\n'),
        );
        const fromKustomize = byKey(docs(execFileSync(kubectl.path, ['kustomize', dir], { encoding: 'utf8' })).filter((d) => d.kind !== 'Namespace'));
        const fromHelm = byKey(docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'kevents', '--set', `archive.type=${overlay}`, '--set', 'monitoring.enabled=true'])));
        assert.ok(fromKustomize.has('ServiceMonitor/kevents/kevents') && fromKustomize.has('PrometheusRule/kevents/kevents'));
        assert.deepEqual([...fromHelm.keys()].sort(), [...fromKustomize.keys()].sort());
        for (const [key, doc] of fromKustomize) assert.deepEqual(fromHelm.get(key), doc, key);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  /** withAggregatedApi builds an overlay with components/aggregated-api as docs/deploy.md adds it: no namespace of its own, since one RoleBinding lives in kube-system. */
  const withAggregatedApi = (overlay: string): Doc[] => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-kustomize-'));
    try {
      const rel = (p: string): string => relative(dir, `${root}deploy/kustomize/${p}`);
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization', `resources: [${rel(`overlays/${overlay}`)}]`, `components: [${rel('components/aggregated-api')}]`, ''].join('\n'),
      );
      return docs(execFileSync(kubectl.path, ['kustomize', dir], { encoding: 'utf8' }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  for (const overlay of ['sqlite', 'postgres']) {
    void it(`with aggregatedApi.enabled the chart renders what overlays/${overlay} builds with components/aggregated-api`, () => {
      const built = withAggregatedApi(overlay);
      const fromKustomize = byKey(built.filter((d) => d.kind !== 'Namespace'));
      const fromHelm = byKey(docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'kevents', '--set', `archive.type=${overlay}`, '--set', 'aggregatedApi.enabled=true'])));
      assert.deepEqual([...fromHelm.keys()].sort(), [...fromKustomize.keys()].sort());
      for (const [key, doc] of fromKustomize) assert.deepEqual(fromHelm.get(key), doc, key);

      const get = (key: string): any => fromKustomize.get(key);
      const apiService = get('APIService//v1alpha1.archive.kevents.io');
      assert.deepEqual(apiService.spec, { group: 'archive.kevents.io', version: 'v1alpha1', service: { namespace: 'kevents', name: 'kevents', port: 443 }, groupPriorityMinimum: 1000, versionPriority: 15 });
      assert.equal(apiService.metadata.annotations['cert-manager.io/inject-ca-from'], 'kevents/kevents-tls');
      assert.deepEqual(get('Certificate/kevents/kevents-tls').spec.dnsNames, ['kevents.kevents.svc', 'kevents.kevents.svc.cluster.local']);
      assert.equal(get('Service/kevents/kevents').spec.ports[0].port, 443);
      const sa = [{ kind: 'ServiceAccount', name: 'kevents', namespace: 'kevents' }];
      assert.deepEqual([get('ClusterRoleBinding//kevents-auth-delegator').roleRef.name, get('ClusterRoleBinding//kevents-auth-delegator').subjects], ['system:auth-delegator', sa]);
      const reader = get('RoleBinding/kube-system/kevents-auth-reader');
      assert.deepEqual([reader.roleRef, reader.subjects], [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' }, sa]);
      const role = get('ClusterRole//kevents-archive-reader');
      for (const to of ['view', 'edit', 'admin']) assert.equal(role.metadata.labels[`rbac.authorization.k8s.io/aggregate-to-${to}`], 'true');
      assert.deepEqual(role.rules, [{ apiGroups: ['archive.kevents.io'], resources: ['events', 'incidents', 'occurrences', 'search', 'timeline'], verbs: ['get', 'list', 'watch'] }]);
      const serve = get('Deployment/kevents/kevents').spec.template.spec.containers[0];
      assert.equal(serve.name, 'serve');
      assert.ok(serve.args.includes('--delegate-auth'), serve.args.join(' '));
    });
  }

  void it('aggregatedApi.caBundle puts the CA in the APIService and renders no cert-manager object', () => {
    const rendered = docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'archive', '--set', 'aggregatedApi.enabled=true', '--set', 'aggregatedApi.caBundle=Q0EK']));
    assert.deepEqual(rendered.filter((d) => d.apiVersion.startsWith('cert-manager.io/')), []);
    const apiService = rendered.find((d) => d.kind === 'APIService') as any;
    assert.equal(apiService.spec.caBundle, 'Q0EK');
    assert.equal(apiService.spec.service.namespace, 'archive');
    assert.equal(apiService.metadata.annotations, undefined);
  });

  void it('helm lint passes and a wrong archive.type is refused', () => {
    helm(['lint', `${root}deploy/chart/kevents`]);
    assert.throws(() => helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--set', 'archive.type=etcd']), /archive\.type must be sqlite or postgres/);
  });

  void it('clusterRetention adds a --retention NAME=DURATION per cluster beside the default, for serve and for the mirror', () => {
    for (const overlay of ['sqlite', 'postgres']) {
      const rendered = docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'kevents', '--set', `archive.type=${overlay}`, '--set', 'clusterRetention.prod=90d', '--set', 'clusterRetention.staging=7d']));
      const args = rendered
        .filter((d) => d.kind === 'Deployment')
        .flatMap((d) => (d.spec as { template: { spec: { containers: { args?: string[] }[] } } }).template.spec.containers.flatMap((c) => c.args ?? []))
        .filter((a) => a.startsWith('--retention='));
      assert.deepEqual(args, ['--retention=30d', '--retention=prod=90d', '--retention=staging=7d'], overlay);
    }
  });

  void it('archive.sqlite.workers above 1 serves the SQLite archive with --workers; 1 leaves the flag out', () => {
    const serveArgs = (set: string[]): string[] =>
      docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'kevents', ...set]))
        .filter((d) => d.kind === 'Deployment')
        .flatMap((d) => (d.spec as { template: { spec: { containers: { name: string; args?: string[] }[] } } }).template.spec.containers)
        .filter((c) => c.name === 'serve')
        .flatMap((c) => c.args ?? []);
    assert.ok(!serveArgs([]).some((a) => a.startsWith('--workers')));
    assert.ok(serveArgs(['--set', 'archive.sqlite.workers=3']).includes('--workers=3'));
    assert.ok(!serveArgs(['--set', 'archive.type=postgres', '--set', 'archive.sqlite.workers=3']).some((a) => a.startsWith('--workers')), 'PostgreSQL scales with replicas');
  });

  void it('the PostgreSQL password reaches no container argument: the URL carries none, each container reads it from the mounted Secret', () => {
    type Container = { name: string; args?: string[]; env?: { name: string; valueFrom?: { secretKeyRef?: unknown } }[]; volumeMounts?: { name: string; mountPath: string }[] };
    type Volume = { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] } };
    const rendered: [string, Doc[]][] = [
      ['overlays/postgres', kustomize('postgres')],
      ['the chart', docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'kevents', '--set', 'archive.type=postgres']))],
      ['the chart, another URL', docs(helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--namespace', 'kevents', '--set', 'archive.type=postgres', '--set', 'archive.postgres.url=postgres://archiver@db.example:6432/events?schema=prod']))],
    ];
    for (const [what, all] of rendered) {
      const pod = (all.find((d) => d.kind === 'Deployment')!.spec as { template: { spec: { containers: Container[]; volumes: Volume[] } } }).template.spec;
      assert.deepEqual(pod.containers.map((c) => c.name), ['serve', 'mirror'], what);
      for (const c of pod.containers) {
        const args = c.args ?? [];
        const at = `${what}: container ${c.name}`;
        // Kubernetes expands $(NAME) in args from the container's env: a Secret's value there is in argv again.
        const fromSecrets = new Set((c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef !== undefined).map((e) => e.name));
        for (const a of args) for (const [, name] of a.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) assert.ok(!fromSecrets.has(name!), `${at}: ${a} expands a Secret`);
        const urls = args.filter((a) => /^--(storage|to|from)=postgres(ql)?:\/\//.test(a)).map((a) => new URL(a.slice(a.indexOf('=') + 1)));
        assert.equal(urls.length, 1, `${at}: ${args.join(' ')}`);
        assert.equal(urls[0]!.password, '', `${at}: ${urls[0]!.href}`);
        assert.notEqual(urls[0]!.username, '', at);
        const file = args.find((a) => a.startsWith('--storage-password-file='))?.slice('--storage-password-file='.length);
        assert.ok(file !== undefined, `${at}: no --storage-password-file in ${args.join(' ')}`);
        // The file is the key `password` of the Secret kevents-postgres, where that container mounts it.
        const mount = (c.volumeMounts ?? []).find((m) => file.startsWith(`${m.mountPath}/`));
        assert.ok(mount !== undefined, `${at}: ${file} is on no mount`);
        const volume = pod.volumes.find((v) => v.name === mount.name);
        assert.equal(volume?.secret?.secretName, 'kevents-postgres', at);
        assert.deepEqual(volume.secret.items, [{ key: 'password', path: file.slice(mount.mountPath.length + 1) }], at);
      }
    }
    assert.throws(
      () => helm(['template', 'kevents', `${root}deploy/chart/kevents`, '--set', 'archive.type=postgres', '--set', 'archive.postgres.url=postgres://kevents:s3cret@db:5432/kevents']),
      /archive\.postgres\.url holds a password, which every process listing would show/,
    );
  });

  void it('the ClusterRole grants list and watch on events in both groups and nothing else; the Role only the mirror\'s Lease', () => {
    for (const overlay of ['sqlite', 'postgres']) {
      const all = kustomize(overlay);
      const clusterRoles = all.filter((d) => d.kind === 'ClusterRole');
      assert.deepEqual(clusterRoles.map((d) => d.rules), [
        [
          { apiGroups: [''], resources: ['events'], verbs: ['list', 'watch'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list', 'watch'] },
          { apiGroups: [''], resources: ['namespaces'], resourceNames: ['kube-system'], verbs: ['get'] },
        ],
      ]);
      const roles = all.filter((d) => d.kind === 'Role');
      assert.deepEqual(roles.map((d) => [d.metadata.namespace, d.rules]), [
        [
          'kevents',
          [
            { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
            { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['kevents-mirror'], verbs: ['get', 'update'] },
          ],
        ],
      ]);
    }
  });

  void it('every container runs as non-root on a read-only root filesystem, with probes on /readyz and /livez and resource requests', () => {
    for (const overlay of ['sqlite', 'postgres']) {
      const deployment = kustomize(overlay).find((d) => d.kind === 'Deployment') as unknown as {
        spec: { replicas: number; template: { spec: { securityContext: Record<string, unknown>; containers: Record<string, any>[] } } };
      };
      assert.equal(deployment.spec.replicas, overlay === 'postgres' ? 2 : 1);
      const pod = deployment.spec.template.spec;
      assert.equal(pod.securityContext.runAsNonRoot, true);
      for (const c of pod.containers) {
        assert.equal(c.securityContext.readOnlyRootFilesystem, true, c.name);
        assert.equal(c.securityContext.allowPrivilegeEscalation, false, c.name);
        assert.deepEqual(c.securityContext.capabilities, { drop: ['ALL'] }, c.name);
        assert.equal(c.readinessProbe.httpGet.path, '/readyz', c.name);
        assert.equal(c.livenessProbe.httpGet.path, '/livez', c.name);
        // A migration on first open runs before the process answers: the liveness probe waits for it, up to an hour.
        assert.deepEqual(c.startupProbe.httpGet, c.livenessProbe.httpGet, c.name);
        assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 3600, c.name);
        assert.ok(c.resources.requests.cpu !== undefined && c.resources.requests.memory !== undefined, c.name);
      }
      const names = pod.containers.map((c) => c.name);
      assert.deepEqual(names, overlay === 'postgres' ? ['serve', 'mirror'] : ['serve']);
      const mirrorArgs = overlay === 'postgres' ? pod.containers[1]!.args : pod.containers[0]!.args;
      assert.ok(mirrorArgs.includes(overlay === 'postgres' ? '--leader-elect' : '--mirror=in-cluster'), mirrorArgs.join(' '));
    }
  });

  void it('the Dockerfile builds in a Node 20 stage and runs as non-root on distroless Node 20', () => {
    const text = readFileSync(`${root}deploy/Dockerfile`, 'utf8');
    // The bases are build arguments (test/image.test.ts builds from local ones): by default, the public ones.
    const args = new Map([...text.matchAll(/^ARG\s+(\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const froms = [...text.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => m[1]!.replace(/^\$\{(\w+)\}$/, (whole, name: string) => args.get(name) ?? whole));
    assert.equal(froms.length, 2);
    assert.match(froms[0]!, /^node:20(\.\d+)*-bookworm-slim/);
    assert.match(froms[1]!, /^gcr\.io\/distroless\/nodejs20-debian12:nonroot/);
    assert.match(text, /^USER 65532:65532$/m);
  });
});

void describe('kevents mirror --leader-elect flags', () => {
  const mirror = (args: string[]): { status: number | null; stderr: string } => {
    const r = spawnSync(process.execPath, [CLI, 'mirror', '--to', 'memory:', '--source', 'http://127.0.0.1:1', '--listen', '127.0.0.1:0', '--leader-elect', ...args], { encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stderr: r.stderr };
  };
  void it('refuses timings client-go would refuse, with its message', () => {
    const a = mirror(['--leader-elect-lease-duration', '10s', '--leader-elect-renew-deadline', '10s']);
    assert.equal(a.status, 2, a.stderr);
    assert.match(a.stderr, /leader election: leaseDuration must be greater than renewDeadline/);
    const b = mirror(['--leader-elect-retry-period', '9s']);
    assert.equal(b.status, 2, b.stderr);
    assert.match(b.stderr, /renewDeadline must be greater than retryPeriod\*JitterFactor\(1\.2\)/);
    const c = mirror(['--leader-elect-retry-period', 'soon']);
    assert.equal(c.status, 2, c.stderr);
    assert.match(c.stderr, /--leader-elect-retry-period: /);
  });
  void it('--in-cluster outside a pod says what is missing', () => {
    const r = spawnSync(process.execPath, [CLI, 'mirror', '--to', 'memory:', '--in-cluster', '--listen', '127.0.0.1:0'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, KUBERNETES_SERVICE_HOST: '', KUBERNETES_SERVICE_PORT: '' },
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /error: --in-cluster: unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined/);
  });
});
