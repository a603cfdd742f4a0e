import type { CoreEvent } from '../api/index.js';
import type { Facts, FailureKind, StepTemplate } from './kind.js';
import { defined, firstGroup, podWords, present, said, theNode, thePod } from './text.js';

/**
 * Scheduling failures: the scheduler's FailedScheduling and Preempted events.
 *
 * FailedScheduling's message is the FitError of
 * pkg/scheduler/framework/types.go: `0/%v nodes are available: %v.` (the
 * reasons as `<count> <reason>`, sorted as strings) then, since 1.24,
 * ` preemption: 0/%v nodes are available: …`. The reasons come from each plugin:
 * noderesources/fit.go (`Insufficient %v`, `Too many pods`),
 * tainttoleration/taint_toleration.go (`node(s) had untolerated taint {%s: %s}`,
 * older `node(s) had taint {%s: %s}, that the pod didn't tolerate`),
 * nodeaffinity/node_affinity.go (`node(s) didn't match Pod's node
 * affinity/selector`, older `node(s) didn't match node selector`),
 * interpodaffinity and podtopologyspread, nodeunschedulable
 * (`node(s) were unschedulable`), volumebinding/volume_binding.go (`pod has unbound
 * immediate PersistentVolumeClaims`, `node(s) had volume node affinity conflict`,
 * `node(s) didn't find available persistent volumes to bind`) and the PVC lookup
 * (`persistentvolumeclaim "%s" not found`).
 */

/** FitReason is one `<count> <reason>` of a FitError. */
interface FitReason {
  count: number;
  text: string;
}

/** FitError is the parsed part of a FailedScheduling message before ` preemption:`. */
interface FitError {
  nodes: string | undefined;
  reasons: FitReason[];
  /** summary is the reasons' text as the scheduler wrote it. */
  summary: string;
}

function parseFitError(message: string): FitError {
  const head = message.split(/\s+preemption:/)[0] ?? message;
  const m = /(\d+)\/(\d+) nodes are available:?\s*([\s\S]*)$/.exec(head);
  const body = (m?.[3] ?? head).trim().replace(/\.$/, '');
  const reasons: FitReason[] = [];
  // Reasons are split on ", " outside braces: a taint `{key: value}` holds ": " but no ", ".
  for (const part of body.split(/,\s+(?![^{]*\})/)) {
    const r = /^(\d+)\s+(.+)$/.exec(part.trim());
    if (r) reasons.push({ count: Number(r[1]), text: r[2]!.trim() });
    else if (part.trim() !== '') reasons.push({ count: 0, text: part.trim() });
  }
  return { nodes: m?.[2], reasons, summary: body };
}

const RESOURCE = /^Insufficient (\S+)$|^Too many pods$/;
const TAINT = /had (?:untolerated )?taints? \{([^}]*)\}|untolerated taint/;
const UNSCHEDULABLE_TAINT = /node\.kubernetes\.io\/unschedulable/;
const AFFINITY = /didn't match (?:Pod's node affinity|node selector|pod affinity|pod anti-affinity|pod topology spread)|didn't satisfy existing pods anti-affinity|didn't match Pod's node affinity\/selector/;
const CORDONED = /were unschedulable/;
const VOLUME = /unbound (?:immediate )?PersistentVolumeClaims|persistentvolumeclaim "[^"]*" not found|volume node affinity conflict|didn't find available persistent volumes|node\(s\) exceed max volume count/;

type SchedulingClass = 'unschedulable-resources' | 'unschedulable-taint' | 'unschedulable-affinity' | 'unschedulable-volume' | 'unschedulable-cordoned';

function classOf(text: string): SchedulingClass | undefined {
  if (VOLUME.test(text)) return 'unschedulable-volume';
  if (CORDONED.test(text) || (TAINT.test(text) && UNSCHEDULABLE_TAINT.test(text))) return 'unschedulable-cordoned';
  if (RESOURCE.test(text)) return 'unschedulable-resources';
  if (TAINT.test(text)) return 'unschedulable-taint';
  if (AFFINITY.test(text)) return 'unschedulable-affinity';
  return undefined;
}

/**
 * schedulingClass picks the kind a FailedScheduling message shows: a volume
 * problem (its own PreFilter, which stops every node) first, else the reason
 * that rules out the most nodes (ties to the first listed).
 */
function schedulingClass(message: string): SchedulingClass | undefined {
  const fit = parseFitError(message);
  if (VOLUME.test(fit.summary)) return 'unschedulable-volume';
  let best: { cls: SchedulingClass; count: number } | undefined;
  for (const r of fit.reasons) {
    const cls = classOf(r.text);
    if (cls !== undefined && (best === undefined || r.count > best.count)) best = { cls, count: r.count };
  }
  return best?.cls ?? classOf(fit.summary);
}

function fitFacts(e: CoreEvent, cls: SchedulingClass): Record<string, string> | undefined {
  if (e.reason !== 'FailedScheduling') return undefined;
  const message = e.message ?? '';
  if (schedulingClass(message) !== cls) return undefined;
  const fit = parseFitError(message);
  const resources = fit.reasons.map((r) => (r.text === 'Too many pods' ? 'pods' : firstGroup(/^Insufficient (\S+)$/, r.text))).filter((x): x is string => x !== undefined);
  return defined({
    nodes: fit.nodes,
    scheduler: fit.summary,
    resources: resources.length > 0 ? resources.join(', ') : undefined,
    taint: firstGroup(/had (?:untolerated )?taints? \{([^}]*)\}/, message),
    claim: firstGroup(/persistentvolumeclaim "([^"]*)" not found/, message),
  });
}

/** nodesAvailable is the scheduler's verdict in brackets, ` (0/3 nodes are available: "…")`, or nothing when it is empty. */
function nodesAvailable(f: Facts): string {
  if (!present(f.scheduler)) return present(f.nodes) ? ` (0/${f.nodes} nodes are available)` : '';
  return present(f.nodes) ? ` (0/${f.nodes} nodes are available: ${said(f.scheduler)})` : ` (${said(f.scheduler)})`;
}

const describeNodes: StepTemplate = { words: ['kubectl', 'describe', 'nodes'], why: "each node's Allocatable, Allocated resources, Taints and Unschedulable flag" };

/** SCHEDULING_KINDS are the scheduler's failure kinds. */
export const SCHEDULING_KINDS: readonly FailureKind[] = [
  {
    id: 'unschedulable-volume',
    role: 'symptom',
    subject: 'object',
    reasons: ['FailedScheduling'],
    match: (e) => fitFacts(e, 'unschedulable-volume'),
    cause: (f) =>
      present(f.claim)
        ? `${thePod(f)} cannot be scheduled: its PersistentVolumeClaim ${said(f.claim)} does not exist.`
        : `${thePod(f)} cannot be scheduled until its PersistentVolumeClaims bind${nodesAvailable(f)}; events do not say why they are not bound: read the claims' events.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pvc', '-n', { value: f.namespace, role: 'namespace' }], why: 'the claims of the namespace: which are Pending, and their StorageClass' },
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', "jsonpath={.spec.volumes[*].persistentVolumeClaim.claimName}"], why: 'the claims the pod mounts' },
    ],
    explainedBy: ['volume-provisioning'],
  },
  {
    id: 'unschedulable-cordoned',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedScheduling'],
    match: (e) => fitFacts(e, 'unschedulable-cordoned'),
    cause: (f) => `${thePod(f)} cannot be scheduled: nodes are cordoned${nodesAvailable(f)}.`,
    steps: () => [{ words: ['kubectl', 'get', 'nodes'], why: 'SchedulingDisabled marks a cordoned node: a drain or upgrade in progress, or one left cordoned (kubectl uncordon)' }],
  },
  {
    id: 'unschedulable-resources',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedScheduling'],
    match: (e) => fitFacts(e, 'unschedulable-resources'),
    cause: (f) => `${thePod(f)} cannot be scheduled: no node has enough free ${present(f.resources) ? said(f.resources) : 'resources'} for its requests${nodesAvailable(f)}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.containers[*].resources.requests}'], why: "the pod's requests, to compare with what the nodes have left" },
      describeNodes,
    ],
  },
  {
    id: 'unschedulable-taint',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedScheduling'],
    match: (e) => fitFacts(e, 'unschedulable-taint'),
    cause: (f) =>
      `${thePod(f)} cannot be scheduled: nodes carry ${present(f.taint) ? `the taint {${said(f.taint)}}` : 'taints'} it does not tolerate${nodesAvailable(f)}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'nodes', '-o', 'custom-columns=NAME:.metadata.name,TAINTS:.spec.taints'], why: "the nodes' taints" },
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.tolerations}'], why: "the pod's tolerations: add one for the taint, or target untainted nodes" },
    ],
  },
  {
    id: 'unschedulable-affinity',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedScheduling'],
    match: (e) => fitFacts(e, 'unschedulable-affinity'),
    cause: (f) => `${thePod(f)} cannot be scheduled: no node matches its node selector or affinity rules${nodesAvailable(f)}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.nodeSelector} {.spec.affinity}'], why: "the pod's node selector and affinity" },
      { words: ['kubectl', 'get', 'nodes', '--show-labels'], why: 'the labels the selector has to match' },
    ],
  },
  {
    // pkg/scheduler/framework/preemption/preemption.go: `Preempted by pod %v on node %v` (the preemptor's UID);
    // older releases `Preempted by %v/%v on node %v` (its namespace/name).
    id: 'preempted',
    role: 'cause',
    subject: 'object',
    reasons: ['Preempted'],
    match: (e) => {
      const m = /Preempted by (?:pod )?(\S+) on node (\S+)/.exec(e.message ?? '');
      return m ? { preemptor: m[1]!, node: m[2]! } : undefined;
    },
    cause: (f) => `${thePod(f)} was preempted on ${theNode(f)} to make room for ${present(f.preemptor) ? `the higher-priority pod ${said(f.preemptor)}` : 'a higher-priority pod'}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.priorityClassName}'], why: "the pod's priority class" },
      { words: ['kubectl', 'get', 'priorityclasses'], why: 'the priorities that decide who preempts whom' },
    ],
  },
];
