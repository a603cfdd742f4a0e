import type { FailureKind } from './kind.js';
import { defined, firstGroup, podWords, said } from './text.js';

/**
 * Volume failures: the persistentvolume-controller's claim events, the
 * attach/detach controller's Multi-Attach error and the kubelet's FailedMount.
 */

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
        ? `PersistentVolumeClaim ${said(f.objectName)} cannot be provisioned: its StorageClass ${said(f.storageClass)} does not exist.`
        : f.problem === 'no-volume'
          ? `PersistentVolumeClaim ${said(f.objectName)} cannot bind: no PersistentVolume matches it and it names no StorageClass (and there is no default one).`
          : `PersistentVolumeClaim ${said(f.objectName)} cannot be provisioned${f.storageClass === undefined ? '' : ` with StorageClass ${said(f.storageClass)}`}: ${said(f.error)}.`,
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
      `Volume ${said(f.volume)} of Pod ${said(f.objectName)} is still attached to another node (read-write-once)${f.usedBy === undefined ? '' : `, used by ${said(f.usedBy)}`}; it cannot attach until the old pod or node releases it.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'volumeattachments'], why: 'the node the volume is still attached to' },
      { words: ['kubectl', 'get', 'pods', '-n', { value: f.namespace, role: 'namespace' }, '-o', 'wide'], why: 'the old pod holding the volume, and its node' },
    ],
  },
  {
    // pkg/volume/util/operationexecutor/operation_executor.go generateVolumeMsg: `MountVolume.SetUp failed for
    // volume %q : %v`, the plugin's error naming the missing `secret "%s" not found` or `configmap "%s" not found`.
    id: 'mount-missing-source',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedMount'],
    match: (e) => {
      const m = e.message ?? '';
      const src = /(secret|configmap|configmaps|secrets) "([^"]*)" not found/i.exec(m);
      if (!src) return undefined;
      // A failed cache sync at pod start is transient noise (kubernetes/kubernetes#99475), not a missing object.
      if (/failed to sync (?:secret|configmap) cache/.test(m)) return undefined;
      return defined({ volume: firstGroup(/for volume "([^"]*)"/, m), sourceKind: /secret/i.test(src[1]!) ? 'Secret' : 'ConfigMap', source: src[2] });
    },
    cause: (f) => `Pod ${said(f.objectName)} cannot start: its volume ${said(f.volume)} needs the ${f.sourceKind} ${said(f.source)}, which does not exist in namespace ${said(f.namespace)}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', f.sourceKind === 'Secret' ? 'secret' : 'configmap', { value: f.source, role: 'name' }, '-n', { value: f.namespace, role: 'namespace' }], why: 'confirms it is missing: create it, or fix the name the pod refers to' },
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.volumes}'], why: "the pod's volumes and the names they refer to" },
    ],
  },
];
