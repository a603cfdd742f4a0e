import type { CoreEvent } from '../../api/index.js';
import { block, millicores, step } from '../exercise.js';
import type { Exercise, ExerciseContext } from '../exercise.js';

/** SCHEDULER is the reporting controller of kube-scheduler's events. */
const SCHEDULER = 'default-scheduler';

/** HOG is the Deployment that does not fit. */
export const HOG = 'hog';

/** deploymentOfPod is the Deployment a ReplicaSet's pod belongs to, by name (hog-6cffb64749-jsfnn → hog). */
export function deploymentOfPod(pod: string): string | undefined {
  return /^(.+)-[a-z0-9]{6,10}-[a-z0-9]{5}$/.exec(pod)?.[1];
}

/** isInsufficientCpu tells whether an event is the scheduler's FailedScheduling for want of CPU. */
export function isInsufficientCpu(e: CoreEvent): boolean {
  return e.reason === 'FailedScheduling' && e.involvedObject.kind === 'Pod' && /Insufficient cpu/.test(e.message ?? '') && (e.reportingComponent === SCHEDULER || e.source?.component === SCHEDULER);
}

/** schedulerSentence is what kube-scheduler says of a hog pod: the real node, where there is one, refuses it for its taint. */
function schedulerSentence(ctx: ExerciseContext): string {
  const n = ctx.nodes.count;
  if (ctx.realNode === undefined) return `0/${n} nodes are available: ${n} Insufficient cpu. preemption: 0/${n} nodes are available: ${n} No preemption victims found for incoming pod.`;
  const all = n + 1;
  return `0/${all} nodes are available: 1 node(s) had untolerated taint {${ctx.realNode.taint.key}: ${ctx.realNode.taint.value}}, ${n} Insufficient cpu. preemption: 0/${all} nodes are available: 1 Preemption is not helpful for scheduling, ${n} No preemption victims found for incoming pod.`;
}

function hogManifest(ctx: ExerciseContext): string {
  // Three quarters of a node each: one pod per node fits, and one more than there are nodes does not.
  const request = Math.floor((millicores(ctx.nodes.cpu) * 3) / 4);
  return `kubectl apply -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${HOG} }
spec:
  replicas: ${ctx.nodes.count + 1}
  selector: { matchLabels: { app: ${HOG} } }
  template:
    metadata: { labels: { app: ${HOG} } }
    spec:
      containers:
      - name: ${HOG}
        image: nginx
        resources: { requests: { cpu: ${request}m } }
EOF
kubectl get pods -l app=${HOG}
kubectl get events --field-selector reason=FailedScheduling
kubectl events --for deployment/${HOG}`;
}

/** scheduler is exercise 5: a Deployment too large for the nodes, and the real scheduler's FailedScheduling. */
export const scheduler: Exercise = {
  number: 5,
  title: 'The scheduler\'s sentence',
  summary: 'a Deployment too large for the nodes, and the real scheduler\'s "0/3 nodes are available: 3 Insufficient cpu."',
  task: (ctx) =>
    [
      `The lab's ${ctx.nodes.count} nodes have ${ctx.nodes.cpu} CPU each. The pods are fake, but the scheduler is the real kube-scheduler:`,
      `ask for one pod more than fits.`,
      '',
      block(hogManifest(ctx)),
      '',
      'What you should see: one pod Pending, and a Warning from default-scheduler on it:',
      `    FailedScheduling   pod/${HOG}-…   ${schedulerSentence(ctx)}`,
      'A good event message: a number, the name of what is missing, and a hint of what to do next.',
      'The pods that did fit go through Scheduled, Pulling, Pulled, Created and Started (see exercise 6).',
    ].join('\n'),
  async check(view) {
    const cluster = (await view.events()).filter(isInsufficientCpu);
    const fromArchive = cluster.length === 0 ? (await view.archiveEvents()).filter(isInsufficientCpu) : [];
    const found = cluster[0] ?? fromArchive[0];
    const deployment = found === undefined ? undefined : deploymentOfPod(found.involvedObject.name ?? '');
    return {
      items: [
        step(deployment !== undefined, `pod ${found?.involvedObject.name ?? ''} of deployment/${deployment ?? ''} could not be scheduled${cluster.length === 0 ? ' (read from the archive: the cluster has forgotten it)' : ''}`, `no FailedScheduling for want of CPU from ${SCHEDULER} on a pod of a Deployment in ${view.state.namespace} yet: apply the Deployment above`),
      ],
      notes: found === undefined ? [] : [`the scheduler said: ${found.message ?? ''}`],
    };
  },
};
