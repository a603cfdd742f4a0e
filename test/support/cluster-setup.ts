import type { ControlPlane } from './control-plane.js';

/** createNamespaces creates namespaces that do not exist yet: kube-apiserver refuses events in a namespace it does not have. */
export async function createNamespaces(cp: ControlPlane, names: string[]): Promise<void> {
  for (const name of names) {
    const r = await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    if (r.status !== 201 && r.status !== 409) throw new Error(`creating namespace ${name}: ${r.status} ${r.text}`);
  }
}

/** ServiceAccountOptions name a service account and what it may do. */
export interface ServiceAccountOptions {
  namespace: string;
  name: string;
  /** rules are the PolicyRules of the ClusterRole bound to the account. */
  rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
}

/**
 * serviceAccountToken creates a service account bound to a ClusterRole of its own and returns a
 * token for it from the TokenRequest API: a client that is not in system:masters, so that the API
 * server's limits (max-in-flight, RBAC) apply to it as they do to an operator in a cluster.
 */
export async function serviceAccountToken(cp: ControlPlane, o: ServiceAccountOptions): Promise<string> {
  const roleName = `kevents-test-${o.namespace}-${o.name}`;
  await createNamespaces(cp, [o.namespace]);
  const steps: [string, unknown][] = [
    [`/api/v1/namespaces/${o.namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: o.name } }],
    ['/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: roleName }, rules: o.rules }],
    [
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name: o.name, namespace: o.namespace }],
      },
    ],
  ];
  for (const [path, body] of steps) {
    const r = await cp.request('POST', path, body);
    if (r.status !== 201 && r.status !== 409) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  }
  const t = await cp.request('POST', `/api/v1/namespaces/${o.namespace}/serviceaccounts/${o.name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  if (t.status !== 201) throw new Error(`token request for ${o.namespace}/${o.name}: ${t.status} ${t.text}`);
  const token = t.json.status.token as string;
  // RBAC reads its objects through informers: wait until the binding is in force.
  const deadline = Date.now() + 20_000;
  const probe = `/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`;
  const first = o.rules[0];
  if (first === undefined) return token;
  for (;;) {
    const review = await cp.request(
      'POST',
      probe,
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: o.namespace, group: first.apiGroups[0] ?? '', resource: first.resources[0] ?? '', verb: first.verbs[0] ?? '' } } },
      { token },
    );
    if (review.status === 201 && review.json?.status?.allowed === true) return token;
    if (Date.now() > deadline) throw new Error(`the service account ${o.namespace}/${o.name} never got its role: ${review.status} ${review.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
