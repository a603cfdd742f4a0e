/**
 * KNOWN_DIFFERENCES are the differential cases where kevents serve answers otherwise than
 * kube-apiserver on purpose, each with its reason; docs/compatibility.md explains each one.
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {};
