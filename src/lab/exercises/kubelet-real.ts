import type { CoreEvent } from '../../api/index.js';
import { block, step } from '../exercise.js';
import type { Exercise, ExerciseContext } from '../exercise.js';
import { KWOK_COMPONENT } from '../kwok-stages.js';
import { formatTaint } from '../real-node-config.js';

/** KUBELET is the component (source.component, reportingComponent) of the kubelet's events. */
export const KUBELET = 'kubelet';

const STARTUP = ['Created', 'Started'];

/** fromKubeletOn tells whether an event about a pod was written by the kubelet of that node, not by a simulation. */
export function fromKubeletOn(e: CoreEvent, node: string): boolean {
  const component = e.reportingComponent !== undefined && e.reportingComponent !== '' ? e.reportingComponent : e.source?.component;
  const host = e.reportingInstance !== undefined && e.reportingInstance !== '' ? e.reportingInstance : e.source?.host;
  return e.involvedObject.kind === 'Pod' && component === KUBELET && host === node;
}

function podManifest(ctx: ExerciseContext): string {
  const node = ctx.realNode!;
  return [
    "kubectl apply -f - <<'EOF'",
    'apiVersion: v1',
    'kind: Pod',
    'metadata: { name: crashy }',
    'spec:',
    `  nodeSelector: { kubernetes.io/hostname: ${node.name} }`,
    `  tolerations: [{ key: ${node.taint.key}, operator: Exists, effect: ${node.taint.effect} }]`,
    '  hostNetwork: true',
    '  automountServiceAccountToken: false',
    '  containers:',
    '  - name: main',
    `    image: ${node.busybox}`,
    '    imagePullPolicy: Never',
    "    command: [sh, -c, 'echo starting; exit 1']",
    'EOF',
    'kubectl get pod crashy -w          # Running, Error, then CrashLoopBackOff; Ctrl-C',
    'kubectl events --for pod/crashy',
    'kubectl get events --field-selector involvedObject.name=crashy -o wide',
  ].join('\n');
}

/** kubeletReal is exercise 6 in a lab with a real node (`lab up --kubelet`): the kubelet's own reasons. */
export const kubeletReal: Exercise = {
  number: 6,
  title: 'The kubelet\'s reasons (real)',
  summary: 'a pod that exits 1 on the real node, and the kubelet\'s own Created, Started and BackOff',
  task: (ctx) => {
    const node = ctx.realNode;
    if (node === undefined) return 'This lab has no real node: start one with kevents lab up --kubelet (exercise 6 is simulated without it).';
    return [
      `This lab has a real node, ${node.name}: a kubelet with containerd on this machine, tainted ${formatTaint(node.taint)}`,
      'so that only pods that tolerate the taint land there. Its pods share the host\'s network, and their image is the one',
      `the node has imported (${node.busybox}): nothing is pulled. Run a pod there whose container exits 1:`,
      '',
      block(podManifest(ctx)),
      '',
      'What you should see (kubectl events --for pod/crashy):',
      `    Normal    Scheduled   Pod/crashy   Successfully assigned ${ctx.namespace}/crashy to ${node.name}`,
      `    Normal    Pulled      Pod/crashy   Container image "${node.busybox}" already present on machine`,
      '    Normal    Created     Pod/crashy   Created container: main              (x3 over 40s as it loops)',
      '    Normal    Started     Pod/crashy   Started container main',
      `    Warning   BackOff     Pod/crashy   Back-off restarting failed container main in pod crashy_${ctx.namespace}(…)`,
      '',
      `These are the kubelet's own: -o wide shows their source as kubelet, ${node.name} (reportingComponent kubelet), and`,
      'the container\'s events carry involvedObject.fieldPath spec.containers{main}. The messages name the container,',
      `the pod and its UID, where the simulated ones of ${KWOK_COMPONENT} are fixed texts. The back-off doubles (10 s,`,
      '20 s, 40 s, … up to 5 minutes), and each restart raises the count of one Created, one Started and one BackOff',
      'event rather than writing new ones. Some failures write no event at all: a container killed for its memory',
      'limit shows OOMKilled in the pod\'s status only (kubectl describe pod), then the same BackOff.',
    ].join('\n');
  },
  async check(view) {
    const node = view.state.realNode?.name ?? '';
    // The first Created and Started may be older than the TTL already: the archive still has them.
    const events = [...(await view.events()), ...(await view.archiveEvents())].filter((e) => fromKubeletOn(e, node));
    const reasons = new Map<string, Set<string>>();
    for (const e of events) {
      const pod = e.involvedObject.name ?? '';
      if (!reasons.has(pod)) reasons.set(pod, new Set());
      // A Normal BackOff is the image pull's back-off; the crash loop's is a Warning.
      reasons.get(pod)!.add(e.reason === 'BackOff' && e.type !== 'Warning' ? 'PullBackOff' : e.reason ?? '');
    }
    const pods = await view.get<{ items: { metadata: { name: string } }[] }>(`/api/v1/namespaces/${view.state.namespace}/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`);
    const onNode = (pods?.items ?? []).map((p) => p.metadata.name);
    const started = [...reasons].find(([, r]) => STARTUP.every((x) => r.has(x)))?.[0];
    const crashed = [...reasons].find(([, r]) => r.has('BackOff'))?.[0];
    const backOff = events.find((e) => e.involvedObject.name === crashed && e.reason === 'BackOff' && e.type === 'Warning');
    return {
      items: [
        step(
          started !== undefined,
          `pod ${started ?? ''} went through ${STARTUP.join(' and ')} on ${node}, written by its kubelet`,
          onNode.length === 0 ? `no pod of namespace ${view.state.namespace} runs on ${node} yet: apply the Pod of kevents lab exercise 6 (it tolerates the node's taint)` : `pod ${onNode[0]!} on ${node} has no ${STARTUP.join(' and ')} from the kubelet yet (it takes a few seconds)`,
        ),
        step(
          crashed !== undefined,
          `pod ${crashed ?? ''} crash-loops: the kubelet on ${node} wrote a Warning BackOff`,
          `no Warning BackOff from the kubelet on ${node} yet: a container that exits 1 is restarted after 10 s, then 20 s, and the BackOff comes with its second failure`,
        ),
      ],
      notes: [
        `real: these events come from the kubelet on ${node} (source.component and reportingComponent kubelet), not from ${KWOK_COMPONENT}`,
        ...(backOff !== undefined ? [`the kubelet said: ${backOff.message ?? ''}${(backOff.count ?? 1) > 1 ? ` (count ${backOff.count ?? 1})` : ''}`] : []),
      ],
    };
  },
};
