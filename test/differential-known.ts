/**
 * KNOWN_DIFFERENCES are the differential cases where kevents serve answers otherwise than
 * kube-apiserver on purpose, each with its reason; docs/compatibility.md explains each one.
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {
  'invalid-core-bad-namespace': 'kevents has no namespaces to look up: it validates the name where kube-apiserver says the namespace does not exist',
  'field-core-cluster': 'kevents.io/cluster selects the events an archive of several clusters holds by cluster; kube-apiserver holds one cluster and refuses the label',
  'field-new-cluster': 'kevents.io/cluster selects the events an archive of several clusters holds by cluster; kube-apiserver holds one cluster and refuses the label',
  'unsupported-media': 'kevents decodes no protobuf, so it does not list application/vnd.kubernetes.protobuf among the types it accepts',
};
