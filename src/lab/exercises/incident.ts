import type { CoreEvent } from '../../api/index.js';
import { eventsLastSeen, formatTimeline } from '../../print/index.js';
import { collectTimeline } from '../../timeline/index.js';
import type { TimelineSource } from '../../timeline/index.js';
import { block, step } from '../exercise.js';
import type { Exercise, LabView } from '../exercise.js';
import { HOG, deploymentOfPod, isInsufficientCpu } from './scheduler.js';

/** archiveSource reads a timeline from the archive's events of the lab's namespace (repeats are spread from counts). */
function archiveSource(view: LabView): TimelineSource {
  return {
    async listEvents(q) {
      return (await view.archiveEvents()).filter((e) => (q.kind === undefined || e.involvedObject.kind === q.kind) && (q.name === undefined || e.involvedObject.name === q.name));
    },
    listOccurrences: () => Promise.resolve(undefined),
  };
}

function expiry(events: CoreEvent[], ttlSeconds: number): string {
  const last = Math.max(...events.map(eventsLastSeen));
  return new Date(last + ttlSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** incident is exercise 7: after the TTL, the cluster has forgotten the incident and the archive rebuilds it. */
export const incident: Exercise = {
  number: 7,
  title: 'The incident table, from events alone',
  summary: 'after the cluster\'s event TTL has passed, kevents timeline -o markdown rebuilds the incident from the archive',
  task: (ctx) =>
    [
      `kube-apiserver deletes an event ${ctx.eventTtl} after its last write (--event-ttl; 1h by default). Investigate`,
      'exercise 5\'s incident once that time has passed. End the incident first, so the scheduler stops writing:',
      '',
      block(`kubectl delete deployment ${HOG}
# wait ${ctx.eventTtl}, then:
kubectl get events --field-selector reason=FailedScheduling
kevents timeline -n ${ctx.namespace} --for deployment/${HOG} -o markdown`),
      '',
      'kevents reads the archive of kevents lab up ($KEVENTS_SERVER, which eval "$(kevents lab env)" sets): a kevents serve',
      'that mirrors the cluster\'s events and keeps each one, and each repeat of it, after the cluster forgets.',
      '',
      'What you should see: kubectl finds nothing ("No resources found in lab namespace."), and the archive',
      `still tells the whole story of deployment/${HOG} in time order: ScalingReplicaSet, SuccessfulCreate, Scheduled`,
      'and the simulated kubelet events of the pods that fit, FailedScheduling with the scheduler\'s sentence for',
      'the one that did not, and Killing as the deployment was deleted.',
    ].join('\n'),
  async check(view) {
    const ttl = view.state.eventTtlSeconds;
    const archived = (await view.archiveEvents()).filter(isInsufficientCpu);
    const live = (await view.events()).filter(isInsufficientCpu);
    const deployment = archived.map((e) => deploymentOfPod(e.involvedObject.name ?? '')).find((d) => d !== undefined);
    const items = [
      step(archived.length > 0, `the archive holds ${archived.length} FailedScheduling event(s) for want of CPU (deployment/${deployment ?? ''})`, 'the archive holds no FailedScheduling for want of CPU: do exercise 5 first'),
      step(
        archived.length > 0 && live.length === 0,
        `the cluster has forgotten them (--event-ttl=${view.state.eventTtl})`,
        live.length > 0 ? `the cluster still holds ${live.length} of them: they expire ${view.state.eventTtl} after their last write, about ${expiry(live, ttl)}${deployment !== undefined ? ` (delete deployment/${deployment} so the scheduler stops writing)` : ''}` : 'nothing for the cluster to forget yet',
      ),
    ];
    const notes: string[] = [];
    if (deployment !== undefined) {
      const timeline = await collectTimeline({ source: archiveSource(view), for: { kind: 'Deployment', name: deployment, namespace: view.state.namespace } });
      const table = formatTimeline(timeline, { format: 'markdown', title: `Deployment/${deployment} in ${view.state.namespace}` });
      items.push(step(/FailedScheduling/.test(table) && /Insufficient cpu/.test(table), `the archive's timeline of deployment/${deployment} names the scheduler's sentence`, `the archive's timeline of deployment/${deployment} has no FailedScheduling row`));
      notes.push(`kevents timeline --server ${view.state.archive} -n ${view.state.namespace} --for deployment/${deployment} -o markdown gives:`, '', table.trimEnd());
    }
    return { items, notes };
  },
};
