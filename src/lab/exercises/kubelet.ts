import type { CoreEvent } from '../../api/index.js';
import { FAIL_LABEL, KWOK_COMPONENT } from '../kwok-stages.js';
import { block, step } from '../exercise.js';
import type { Exercise } from '../exercise.js';

const STARTUP = ['Pulling', 'Pulled', 'Created', 'Started'];
const FAILURE = ['Unhealthy', 'BackOff'];

function byPod(events: CoreEvent[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const e of events) {
    if (e.involvedObject.kind !== 'Pod' || e.source?.component !== KWOK_COMPONENT) continue;
    const name = e.involvedObject.name ?? '';
    if (!out.has(name)) out.set(name, new Set());
    out.get(name)!.add(e.reason ?? '');
  }
  return out;
}

/** kubelet is exercise 6: the kubelet's reasons, simulated by the lab's kwok stages. */
export const kubelet: Exercise = {
  number: 6,
  title: 'The kubelet\'s reasons (simulated)',
  summary: 'fake pods go through Pulling, Pulled, Created, Started; a pod labelled to fail through Unhealthy and BackOff',
  task: () =>
    [
      'kwok pods have no kubelet, so a plain kwok cluster shows none of its events. This lab\'s kwok stages',
      'write them instead: every pod goes through Pulling, Pulled, Created and Started, and a pod',
      `labelled ${FAIL_LABEL}=true then crash-loops through Unhealthy, BackOff and Started again.`,
      '',
      block(`kubectl run crashy --image=busybox --labels=${FAIL_LABEL}=true
kubectl get pod crashy -w          # Running, then CrashLoopBackOff; Ctrl-C
kubectl events --for pod/crashy
kubectl get events --field-selector involvedObject.name=crashy -o wide`),
      '',
      'What you should see:',
      '    Normal    Pulling     pod/crashy   Pulling image',
      '    Normal    Pulled      pod/crashy   Successfully pulled image',
      '    Normal    Created     pod/crashy   Created container',
      '    Normal    Started     pod/crashy   Started container                (x3 over 30s as it loops)',
      '    Warning   Unhealthy   pod/crashy   Readiness probe failed: HTTP probe failed with statuscode: 500',
      '    Warning   BackOff     pod/crashy   Back-off restarting failed container',
      '',
      `These events are simulated: their source is ${KWOK_COMPONENT}, not kubelet with a node name, and their`,
      'messages are fixed texts where a kubelet names the image and the container. The repeats are real',
      'aggregation: kwok records through client-go\'s recorder, which raises count as exercise 4 did by hand.',
      'A lab started with kevents lab up --kubelet has a real node, and this exercise reads its kubelet instead.',
    ].join('\n'),
  async check(view) {
    // A pod's first events may be older than the TTL already: the archive still has them.
    const reasons = byPod([...(await view.events()), ...(await view.archiveEvents())]);
    const full = [...reasons].find(([, r]) => STARTUP.every((x) => r.has(x)));
    const best = [...reasons].sort((a, b) => b[1].size - a[1].size)[0];
    const pods = await view.get<{ items: { metadata: { name: string } }[] }>(`/api/v1/namespaces/${view.state.namespace}/pods?labelSelector=${encodeURIComponent(`${FAIL_LABEL}=true`)}`);
    const failing = (pods?.items ?? []).map((p) => p.metadata.name);
    const crashed = failing.find((p) => FAILURE.every((x) => reasons.get(p)?.has(x) === true));
    const missingStartup = STARTUP.filter((x) => best?.[1].has(x) !== true);
    return {
      items: [
        step(full !== undefined, `pod ${full?.[0] ?? ''} went through ${STARTUP.join(', ')}`, `no pod has gone through ${STARTUP.join(', ')} yet${best !== undefined ? ` (${best[0]} lacks ${missingStartup.join(', ')})` : ': start one, e.g. kubectl run web --image=nginx'}`),
        step(
          crashed !== undefined,
          `pod ${crashed ?? ''} (${FAIL_LABEL}=true) went through ${FAILURE.join(' and ')}`,
          failing.length === 0 ? `no pod labelled ${FAIL_LABEL}=true: kubectl run crashy --image=busybox --labels=${FAIL_LABEL}=true` : `pod ${failing[0]!} has not been through ${FAILURE.join(' and ')} yet (it takes a few seconds)`,
        ),
      ],
      notes: [`simulated: these events come from ${KWOK_COMPONENT} (the lab's kwok stages), not from a kubelet`],
    };
  },
};
