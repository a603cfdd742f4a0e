/** Hint is one next step for an object: a command to run and why. */
export interface Hint {
  reason: string;
  command: string;
  why: string;
}

/** HintTarget is the object the hints are for, and where it ran if known. */
export interface HintTarget {
  kind: string;
  namespace: string;
  name: string;
  /** node is the Node a Pod's events name (Scheduled, or the kubelet's host), if any. */
  node?: string;
}

type Rule = (t: HintTarget, ns: string) => Omit<Hint, 'reason'>[];

const podRef = (t: HintTarget): string => `${t.kind.toLowerCase()}/${t.name}`;
const nodeName = (t: HintTarget): string => (t.kind === 'Node' ? t.name : (t.node ?? 'NODE'));

const crashLoop: Rule = (t, ns) => [
  { command: `kubectl logs ${t.name}${ns} --previous`, why: 'the output of the container run that crashed' },
  { command: `kubectl debug ${t.name}${ns} -it --copy-to=${t.name}-debug --container=CONTAINER -- sh`, why: 'a copy of the pod to poke at with the same spec' },
  { command: `kubectl debug ${t.name}${ns} -it --image=busybox --target=CONTAINER`, why: 'for a distroless image: an ephemeral container sharing its processes' },
];
const imagePull: Rule = (t, ns) => [
  { command: `kubectl get ${podRef(t)}${ns} -o jsonpath='{.spec.containers[*].image}'`, why: 'the exact image reference being pulled (tag, registry, typos)' },
  { command: `kubectl get ${podRef(t)}${ns} -o jsonpath='{.spec.imagePullSecrets}'`, why: 'the pull secrets the pod offers to a private registry' },
];
const nodePressure: Rule = (t) => [
  { command: `kubectl describe node ${nodeName(t)}`, why: 'the node conditions (MemoryPressure, DiskPressure, PIDPressure) and allocations' },
  { command: `kubectl get node ${nodeName(t)} -o jsonpath='{.status.conditions}'`, why: 'when each condition last changed' },
];

/**
 * RULES map an event reason to next steps, each a concrete command: the
 * reasons an incident is usually read from.
 */
const RULES: Record<string, Rule> = {
  FailedScheduling: (t, ns) => [
    { command: `kubectl describe ${podRef(t)}${ns}`, why: 'the scheduler message: which resource, taint or affinity rules every node out' },
    { command: 'kubectl describe nodes | grep -A 8 "Allocated resources"', why: 'requests already committed on each node' },
    { command: "kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints", why: 'taints the pod does not tolerate' },
  ],
  BackOff: crashLoop,
  CrashLoopBackOff: crashLoop,
  ErrImagePull: imagePull,
  ImagePullBackOff: imagePull,
  InspectFailed: imagePull,
  Unhealthy: (t, ns) => [
    { command: `kubectl get ${podRef(t)}${ns} -o jsonpath='{.spec.containers[*].readinessProbe}{"\\n"}{.spec.containers[*].livenessProbe}'`, why: 'the probe definitions: path, port, timeouts, thresholds' },
    { command: `kubectl port-forward ${podRef(t)}${ns} 8080:PORT`, why: 'then curl localhost:8080/PATH to try the endpoint as the kubelet does' },
  ],
  Evicted: nodePressure,
  EvictionThresholdMet: nodePressure,
  NodeHasDiskPressure: nodePressure,
  NodeHasInsufficientMemory: nodePressure,
  NodeHasInsufficientPID: nodePressure,
  NodeNotReady: nodePressure,
  OOMKilling: (t, ns) => [
    { command: `kubectl describe ${podRef(t)}${ns}`, why: 'Last State: OOMKilled and the memory limit of each container' },
    { command: `kubectl top pod ${t.name}${ns} --containers`, why: 'current memory use against the limit' },
  ],
  FailedMount: (t, ns) => [
    { command: `kubectl describe ${podRef(t)}${ns}`, why: 'which volume failed and why' },
    { command: `kubectl get pvc${ns}`, why: 'whether the claims are Bound' },
  ],
  FailedCreate: (t, ns) => [
    { command: `kubectl describe ${podRef(t)}${ns}`, why: 'the controller message: quota, admission webhook or pod security' },
    { command: `kubectl get resourcequota${ns}`, why: 'quota that blocks new pods' },
  ],
  ProgressDeadlineExceeded: (t, ns) => [
    { command: `kubectl rollout status deployment/${t.name}${ns}`, why: 'what the rollout waits for' },
    { command: `kubectl get rs,pods${ns} -o wide`, why: 'which new pods are not becoming ready, then read their events' },
  ],
};

/** hintsFor lists the next steps for the reasons seen on an object, each reason once, in the order given. */
export function hintsFor(target: HintTarget, reasons: readonly string[]): Hint[] {
  const ns = target.namespace === '' ? '' : ` -n ${target.namespace}`;
  const out: Hint[] = [];
  const seen = new Set<Rule>();
  for (const reason of reasons) {
    const rule = RULES[reason];
    if (rule === undefined || seen.has(rule)) continue;
    seen.add(rule);
    for (const h of rule(target, ns)) out.push({ reason, ...h });
  }
  return out;
}
