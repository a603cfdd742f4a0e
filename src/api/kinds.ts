/**
 * The one table of the built-in Kubernetes kinds kevents knows by name: what `--for` resolves without asking a
 * server, what discovery lists so that kubectl can resolve the objects users name, and which kinds own pods or
 * jobs (whose events the timeline and the incidents read roots from). Each consumer derives its view from here.
 */

/** BuiltinKind is one built-in kind: its Kind, preferred group and version, scope, kubectl's names for it, and whether it owns workloads. */
export interface BuiltinKind {
  kind: string;
  /** group is the API group; `''` is the core group. */
  group: string;
  version: string;
  namespaced: boolean;
  /** resource is the plural, lower-case resource name used in URLs. */
  resource: string;
  /** shortNames are the short names kube-apiserver's discovery lists (`po`, `deploy`). */
  shortNames: readonly string[];
  /** owner says the kind's controller creates pods or jobs: its events (any reason) name what it created. */
  owner: boolean;
}

const k = (kind: string, group: string, version: string, namespaced: boolean, resource: string, shortNames: readonly string[], owner = false): BuiltinKind => ({
  kind,
  group,
  version,
  namespaced,
  resource,
  shortNames,
  owner,
});

/** BUILTIN_KIND_TABLE lists the built-in kinds, as kube-apiserver 1.33 names them. */
export const BUILTIN_KIND_TABLE: readonly BuiltinKind[] = [
  k('Pod', '', 'v1', true, 'pods', ['po']),
  k('Node', '', 'v1', false, 'nodes', ['no']),
  k('Namespace', '', 'v1', false, 'namespaces', ['ns']),
  k('Service', '', 'v1', true, 'services', ['svc']),
  k('Endpoints', '', 'v1', true, 'endpoints', ['ep']),
  k('ConfigMap', '', 'v1', true, 'configmaps', ['cm']),
  k('Secret', '', 'v1', true, 'secrets', []),
  k('ServiceAccount', '', 'v1', true, 'serviceaccounts', ['sa']),
  k('PersistentVolumeClaim', '', 'v1', true, 'persistentvolumeclaims', ['pvc']),
  k('PersistentVolume', '', 'v1', false, 'persistentvolumes', ['pv']),
  k('ReplicationController', '', 'v1', true, 'replicationcontrollers', ['rc'], true),
  k('Deployment', 'apps', 'v1', true, 'deployments', ['deploy'], true),
  k('ReplicaSet', 'apps', 'v1', true, 'replicasets', ['rs'], true),
  k('StatefulSet', 'apps', 'v1', true, 'statefulsets', ['sts'], true),
  k('DaemonSet', 'apps', 'v1', true, 'daemonsets', ['ds'], true),
  k('Job', 'batch', 'v1', true, 'jobs', [], true),
  k('CronJob', 'batch', 'v1', true, 'cronjobs', ['cj'], true),
  k('HorizontalPodAutoscaler', 'autoscaling', 'v2', true, 'horizontalpodautoscalers', ['hpa']),
  k('Ingress', 'networking.k8s.io', 'v1', true, 'ingresses', ['ing']),
  k('PodDisruptionBudget', 'policy', 'v1', true, 'poddisruptionbudgets', ['pdb']),
];

/** OWNER_KINDS are the Kinds whose controllers create pods or jobs (Deployment, ReplicaSet, Job, …), in the table's order. */
export const OWNER_KINDS: readonly string[] = BUILTIN_KIND_TABLE.filter((b) => b.owner).map((b) => b.kind);

/** builtinKind finds a built-in kind by its Kind (`Deployment`), exactly. */
export function builtinKind(kind: string): BuiltinKind | undefined {
  return BUILTIN_KIND_TABLE.find((b) => b.kind === kind);
}

/** kindApiVersion spells a built-in kind's group and version as `apiVersion` does: `v1`, `apps/v1`. */
export function kindApiVersion(b: Pick<BuiltinKind, 'group' | 'version'>): string {
  return b.group === '' ? b.version : `${b.group}/${b.version}`;
}
