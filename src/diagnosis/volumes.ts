import type { Facts, FailureKind } from './kind.js';
import { capital, defined, firstGroup, inNamespace, named, podWords, present, said, theNode, thePod } from './text.js';

/**
 * Volume failures: the persistentvolume-controller's claim events, the
 * attach/detach controller's Multi-Attach error and the kubelet's FailedMount.
 */

/** theClaim names the event's claim at the start of a sentence: `PersistentVolumeClaim "data"`, or `A PersistentVolumeClaim`. */
function theClaim(f: Facts): string {
  return capital(named('PersistentVolumeClaim', f.objectName));
}

/** VOLUME_KINDS are the volume failure kinds. */
export const VOLUME_KINDS: readonly FailureKind[] = [
  {
    // pkg/controller/volume/persistentvolume/pv_controller.go: ProvisioningFailed (Warning) with the
    // provisioner's error (`storageclass.storage.k8s.io "%s" not found`, `failed to provision volume with
    // StorageClass "%s": %v`), and FailedBinding (Normal!) `no persistent volumes available for this claim
    // and no storage class is set`.
    id: 'volume-provisioning',
    role: 'cause',
    subject: 'object',
    reasons: ['ProvisioningFailed', 'FailedBinding'],
    match: (e) => {
      const m = e.message ?? '';
      if (e.reason === 'FailedBinding') {
        return /no persistent volumes available for this claim/.test(m) ? { problem: 'no-volume' } : undefined;
      }
      const missing = firstGroup(/storageclass\.storage\.k8s\.io "([^"]*)" not found/, m);
      if (missing !== undefined) return { storageClass: missing, problem: 'class-missing' };
      return defined({ storageClass: firstGroup(/with StorageClass "([^"]*)"/, m), problem: 'provisioner', error: m });
    },
    cause: (f) =>
      f.problem === 'class-missing'
        ? `${theClaim(f)} cannot be provisioned: its StorageClass${present(f.storageClass) ? ` ${said(f.storageClass)}` : ''} does not exist.`
        : f.problem === 'no-volume'
          ? `${theClaim(f)} cannot bind: no PersistentVolume matches it and it names no StorageClass (and there is no default one).`
          : `${theClaim(f)} cannot be provisioned${present(f.storageClass) ? ` with StorageClass ${said(f.storageClass)}` : ''}${present(f.error) ? `: ${said(f.error)}` : ''}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'storageclass'], why: 'the StorageClasses that exist, and which is the default' },
      { words: ['kubectl', 'describe', 'pvc', { value: f.objectName, role: 'name' }, '-n', { value: f.namespace, role: 'namespace' }], why: "the claim's StorageClass, access modes and size" },
    ],
  },
  {
    // pkg/controller/volume/attachdetach/reconciler/reconciler.go: `Multi-Attach error for volume %q Volume is
    // already exclusively attached to one node and can't be attached to another`, or `… Volume is already used
    // by pod(s) %s`.
    id: 'volume-multi-attach',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedAttachVolume'],
    match: (e) => {
      const m = e.message ?? '';
      if (!/Multi-Attach error/.test(m)) return undefined;
      return defined({ volume: firstGroup(/for volume "([^"]*)"/, m), usedBy: firstGroup(/already used by pod\(s\) (.+)$/, m) });
    },
    cause: (f) =>
      `${capital(named('volume', f.volume))} of ${named('pod', f.objectName)} is still attached to another node (read-write-once)${present(f.usedBy) ? `, used by ${said(f.usedBy)}` : ''}; it cannot attach until the old pod or node releases it.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'volumeattachments'], why: 'the node the volume is still attached to' },
      { words: ['kubectl', 'get', 'pods', '-n', { value: f.namespace, role: 'namespace' }, '-o', 'wide'], why: 'the old pod holding the volume, and its node' },
    ],
  },
  {
    // pkg/volume/util/operationexecutor/operation_executor.go generateVolumeMsg: `MountVolume.SetUp failed for
    // volume %q : %v`, the plugin's error naming the missing `secret "%s" not found` or `configmap "%s" not found`,
    // a key the volume's items name that the object lacks (pkg/volume/configmap and pkg/volume/secret:
    // `configmap references non-existent config key: %s`, `references non-existent secret key: %s`), or a hostPath
    // whose type check fails (pkg/volume/hostpath/host_path.go: `hostPath type check failed: %s is not a directory`,
    // `… is not a file`, `… is not a socket file`, `… is not a character device`, `… is not a block device`).
    id: 'mount-missing-source',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedMount'],
    match: (e) => {
      const m = e.message ?? '';
      const volume = firstGroup(/for volume "([^"]*)"/, m);
      const host = /hostPath type check failed: (.+?) is not an? ((?:socket |character |block )?(?:file|directory|device))\b/.exec(m);
      if (host) return defined({ volume, path: host[1]!.trim(), expected: host[2]!, problem: 'host-path' });
      const key = /references non-existent (config|secret) key: (\S+)/i.exec(m);
      if (key) return defined({ volume, sourceKind: key[1]!.toLowerCase() === 'secret' ? 'Secret' : 'ConfigMap', key: key[2]!, problem: 'key' });
      const src = /(secret|configmap|configmaps|secrets) "([^"]*)" not found/i.exec(m);
      if (!src) return undefined;
      // A failed cache sync at pod start is transient noise (kubernetes/kubernetes#99475), not a missing object.
      if (/failed to sync (?:secret|configmap) cache/.test(m)) return undefined;
      return defined({ volume, sourceKind: /secret/i.test(src[1]!) ? 'Secret' : 'ConfigMap', source: src[2], problem: 'object' });
    },
    cause: (f) =>
      f.problem === 'host-path'
        ? `${thePod(f)} cannot start: its hostPath volume${present(f.volume) ? ` ${said(f.volume)}` : ''} expects ${present(f.path) ? said(f.path) : 'its path'} to be a ${f.expected ?? 'file'} on ${theNode(f)}, and it is missing or of another type.`
        : f.problem === 'key'
          ? `${thePod(f)} cannot start: its volume${present(f.volume) ? ` ${said(f.volume)}` : ''} names ${present(f.key) ? `the key ${said(f.key)}` : 'a key'}, which its ${f.sourceKind} does not have.`
          : `${thePod(f)} cannot start: its volume${present(f.volume) ? ` ${said(f.volume)}` : ''} needs ${present(f.source) ? `the ${f.sourceKind} ${said(f.source)}, which does` : `a ${f.sourceKind} that does`} not exist${inNamespace(f)}.`,
    steps: (f) =>
      f.problem === 'host-path'
        ? [
            { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.nodeName} {.spec.volumes[*].hostPath}'], why: "the pod's node and its hostPath volumes with the type each expects" },
            ...(present(f.path) && f.path.startsWith('/')
              ? [{ words: ['kubectl', 'debug', { value: f.node, role: 'node' as const, prefix: 'node/' }, '-it', '--image=busybox:1.36', '--', 'ls', '-l', { value: `/host${f.path}`, role: 'text' as const }], why: 'what is at that path on the node (its root is /host in the debug pod)' }]
              : []),
          ]
        : [
            ...(present(f.source) || f.problem !== 'key'
              ? [{ words: ['kubectl', 'get', f.sourceKind === 'Secret' ? 'secret' : 'configmap', { value: f.source, role: 'name' as const }, '-n', { value: f.namespace, role: 'namespace' as const }], why: f.problem === 'key' ? 'the keys it has' : 'confirms it is missing: create it, or fix the name the pod refers to' }]
              : []),
            { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.volumes}'], why: "the pod's volumes and the names they refer to" },
          ],
  },
];
