import type { Facts, FailureKind, StepTemplate } from './kind.js';
import { capital, defined, firstGroup, named, podWords, present, said, theNode, thePod } from './text.js';

/**
 * Node failures: memory, disk and PID pressure and the evictions they cause,
 * the system OOM killer, a node that stops reporting, and image or container
 * garbage collection failing. Their incident is the node's.
 */

function describeNode(f: Facts): StepTemplate {
  return { words: ['kubectl', 'describe', 'node', { value: f.node, role: 'node' }], why: "the node's conditions (Ready, MemoryPressure, DiskPressure, PIDPressure), what is allocated on it and its recent events" };
}

/** limit is ` "1Gi"`, or nothing when the eviction names no limit. */
function limit(f: Facts): string {
  return present(f.limit) ? ` ${said(f.limit)}` : '';
}

function podsOnNode(f: Facts): StepTemplate {
  return {
    words: ['kubectl', 'get', 'pods', '-A', '-o', 'wide', '--field-selector', { value: f.node, role: 'node', prefix: 'spec.nodeName=' }],
    why: 'the pods on that node, competing for the same memory and disk',
  };
}

/** PRESSURE_STATUS are the node conditions the kubelet announces as `Node %s status is now: %s` (kubelet_node_status.go). */
const PRESSURE_STATUS = /status is now: (NodeHasDiskPressure|NodeHasInsufficientMemory|NodeHasInsufficientPID)/;

/** NODE_KINDS are the node failure kinds; the ephemeral-storage eviction comes first, as it is the pod's own limit. */
export const NODE_KINDS: readonly FailureKind[] = [
  {
    // pkg/kubelet/eviction/helpers.go: `Container %s exceeded its local ephemeral storage limit %q. `,
    // `Pod ephemeral local storage usage exceeds the total limit of containers %s. `,
    // `Usage of EmptyDir volume %q exceeds the limit %q. `.
    id: 'evicted-ephemeral-storage',
    role: 'cause',
    subject: 'object',
    reasons: ['Evicted'],
    match: (e) => {
      const m = e.message ?? '';
      const c = /Container (\S+) exceeded its local ephemeral storage limit "([^"]*)"/.exec(m);
      if (c) return { container: c[1]!, limit: c[2]!, scope: 'container' };
      const p = firstGroup(/Pod ephemeral local storage usage exceeds the total limit of containers (\S+?)\.?(?:\s|$)/, m);
      if (p !== undefined) return { limit: p, scope: 'pod' };
      const v = /Usage of EmptyDir volume "([^"]*)" exceeds the limit "([^"]*)"/.exec(m);
      if (v) return { volume: v[1]!, limit: v[2]!, scope: 'volume' };
      return undefined;
    },
    cause: (f) =>
      f.scope === 'container'
        ? `${thePod(f)} was evicted: its ${named('container', f.container).replace(/^an? /, '')} wrote more than its ephemeral-storage limit${limit(f)} (its own limit, not node pressure).`
        : f.scope === 'volume'
          ? `${thePod(f)} was evicted: its emptyDir volume${present(f.volume) ? ` ${said(f.volume)}` : ''} grew past its limit${limit(f)}.`
          : `${thePod(f)} was evicted: it used more local ephemeral storage than its containers' total limit${limit(f)}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.containers[*].resources.limits.ephemeral-storage} {.spec.volumes[*].emptyDir}'], why: 'the limits it exceeded: raise them, or write less to the container filesystem and emptyDir' },
    ],
  },
  {
    // pkg/kubelet/eviction/helpers.go: `The node was low on resource: %v. ` (+ `Threshold quantity: %v,
    // available: %v. ` and the container's usage), `The node had condition: %v. `; on the node
    // `EvictionThresholdMet` `Attempting to reclaim %s` and kubelet_node_status.go's `Node %s status is now: %s`.
    id: 'evicted-pressure',
    role: 'cause',
    subject: 'node',
    reasons: ['Evicted', 'EvictionThresholdMet', 'NodeHasDiskPressure', 'NodeHasInsufficientMemory', 'NodeHasInsufficientPID'],
    match: (e) => {
      const m = e.message ?? '';
      if (e.reason === 'Evicted') {
        const low = firstGroup(/low on resource: ([\w-]+)/, m);
        if (low !== undefined) return defined({ resource: low, threshold: firstGroup(/Threshold quantity: ([^,\s]+)/, m), available: firstGroup(/available: ([^.\s,]+)/, m) });
        const cond = firstGroup(/had condition: \[?([^\].]+)\]?/, m);
        return cond !== undefined ? { condition: cond } : undefined;
      }
      if (e.reason === 'EvictionThresholdMet') return defined({ resource: firstGroup(/reclaim (\S+)/, m) });
      const status = firstGroup(PRESSURE_STATUS, m) ?? e.reason!;
      return { condition: status.replace(/^NodeHas/, '') };
    },
    cause: (f) =>
      present(f.resource)
        ? `${capital(theNode(f))} ran low on ${said(f.resource)}${present(f.available) ? ` (${said(f.available)} left${present(f.threshold) ? `, threshold ${said(f.threshold)}` : ''})` : ''}, so the kubelet evicted pods to reclaim it.`
        : `${capital(theNode(f))} reported ${present(f.condition) ? said(f.condition) : 'pressure'}, so the kubelet evicts pods until it clears.`,
    steps: (f) => [describeNode(f), podsOnNode(f)],
  },
  {
    // pkg/kubelet/oom/oom_watcher_linux.go: `SystemOOM` `System OOM encountered, victim process: %s, pid: %d`
    // (only the root cgroup); node-problem-detector's kernel monitor: `OOMKilling` `Out of memory: Kill process …`
    // or `Memory cgroup out of memory: Killed process %d (%s) …`.
    id: 'oom-node',
    role: 'cause',
    subject: 'node',
    reasons: ['SystemOOM', 'OOMKilling'],
    match: (e) => {
      const m = e.message ?? '';
      return defined({
        process: firstGroup(/victim process: ([^,]+)/, m) ?? firstGroup(/Kill(?:ed)? process \d+ \(([^)]+)\)/, m),
        pid: firstGroup(/pid: (\d+)/, m) ?? firstGroup(/Kill(?:ed)? process (\d+)/, m),
        cgroup: /Memory cgroup out of memory/.test(m) ? 'container' : undefined,
      });
    },
    cause: (f) =>
      `The kernel's OOM killer on ${theNode(f)} killed ${present(f.process) ? `process ${said(f.process)}` : 'a process'}${f.cgroup === 'container' ? ' at its memory cgroup limit' : ' when the node ran out of memory'}.`,
    steps: (f) => [describeNode(f), podsOnNode(f)],
  },
  {
    // pkg/controller/util/node/controller_utils.go: on the Node `NodeNotReady` (Normal) `Node %s status is now:
    // NodeNotReady`, on each of its pods `NodeNotReady` (Warning) `Node is not ready`;
    // pkg/controller/tainteviction/taint_eviction.go: `TaintManagerEviction` (Normal) `Marking for deletion Pod %s`.
    id: 'node-not-ready',
    role: 'cause',
    subject: 'node',
    reasons: ['NodeNotReady', 'TaintManagerEviction'],
    match: (e) => {
      const m = e.message ?? '';
      if (e.reason === 'TaintManagerEviction') return /Marking for deletion Pod/.test(m) ? { evicted: 'true' } : undefined;
      return /NodeNotReady|Node is not ready/.test(m) ? {} : undefined;
    },
    cause: (f) =>
      !present(f.node)
        ? `${thePod(f)} was marked not ready because its node stopped reporting; the events do not name the node.`
        : `${capital(theNode(f))} stopped reporting (NotReady); its pods were marked not ready${f.evicted === 'true' ? ' and then deleted by the taint manager' : ''}.`,
    steps: (f) => [describeNode(f), podsOnNode(f)],
  },
  {
    // Reasons of pkg/kubelet/events/event.go; messages from images/image_gc_manager.go (`failed to garbage
    // collect required amount of images. Wanted to free %d bytes, but freed %d bytes`) or the runtime's error.
    id: 'node-disk',
    role: 'cause',
    subject: 'node',
    reasons: ['FreeDiskSpaceFailed', 'ImageGCFailed', 'ContainerGCFailed', 'InvalidDiskCapacity'],
    match: (e) => ({ error: e.message ?? '' }),
    cause: (f) => `${capital(theNode(f))} cannot free disk space${present(f.error) ? ` (${present(f.reason) ? `${said(f.reason)}: ` : ''}${said(f.error)})` : present(f.reason) ? ` (${said(f.reason)})` : ''}; disk-pressure evictions follow if it fills.`,
    steps: (f) => [describeNode(f)],
  },
];
