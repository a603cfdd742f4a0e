/**
 * KNOWN_DIFFERENCES are the differential cases where kevents serve answers otherwise than
 * kube-apiserver on purpose, each with its reason; docs/compatibility.md explains each one.
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {
  'invalid-core-bad-namespace': 'kevents has no namespaces to look up: it validates the name where kube-apiserver says the namespace does not exist',
  'unsupported-media': 'kevents decodes no protobuf, so it does not list application/vnd.kubernetes.protobuf among the types it accepts',
};
