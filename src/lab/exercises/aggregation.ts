import { eventInterval, wireTimeMs } from '../../api/index.js';
import { LEARNER, apiOf, covers, isRead } from '../audit-log.js';
import { WIDGET, aboutWidget, block, readAfter, step } from '../exercise.js';
import type { Exercise } from '../exercise.js';
import { widgetRef } from './two-apis.js';

/** aggregation is exercise 4: count and lastTimestamp bumped by hand, and the listing's `(xN over T)`. */
export const aggregation: Exercise = {
  number: 4,
  title: 'Repeats are one event',
  summary: 'count and lastTimestamp bumped by hand, and the listing\'s (x12 over 3m)',
  task: (ctx) =>
    [
      'A recorder that meets the same object, reason and message again does not write a new event: it',
      'raises count and moves lastTimestamp. Do by hand what the recorder does, twelve times over three minutes:',
      '',
      block(`NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl create -f - <<EOF
apiVersion: v1
kind: Event
metadata: { name: demo.repeat }
involvedObject: ${widgetRef(ctx.namespace)}
type: Warning
reason: ReconcileFailed
message: Image tag 1.2.3 does not exist
source: { component: widget-controller }
firstTimestamp: "$NOW"
lastTimestamp: "$NOW"
count: 1
EOF
THEN=$(date -u -d '3 minutes ago' +%Y-%m-%dT%H:%M:%SZ)   # macOS: date -u -v-3M +%Y-%m-%dT%H:%M:%SZ
kubectl patch event demo.repeat --type merge -p "{\\"count\\":12,\\"firstTimestamp\\":\\"$THEN\\",\\"lastTimestamp\\":\\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\\"}"
kubectl events --for widget/${WIDGET.name}
kubectl describe widget ${WIDGET.name}`),
      '',
      'What you should see: one line, not twelve, with the repeats in its age:',
      '    LAST SEEN            TYPE      REASON            OBJECT        MESSAGE',
      '    5s (x12 over 3m)     Warning   ReconcileFailed   Widget/demo   Image tag 1.2.3 does not exist',
      'kubectl get events -o wide shows the same as FIRST SEEN 3m and COUNT 12. This is why a reconcile',
      'loop that fails every second does not fill etcd.',
    ].join('\n'),
  async check(view) {
    const ns = view.state.namespace;
    const bumped = (await view.events()).find((e) => aboutWidget(e, ns) && (e.count ?? 0) > 1 && (wireTimeMs(e.lastTimestamp) ?? 0) > (wireTimeMs(e.firstTimestamp) ?? Infinity));
    const name = bumped?.metadata.name ?? '';
    const changes = view.audit().filter((r) => r.user.username === LEARNER && (r.verb === 'patch' || r.verb === 'update') && r.responseStatus?.code === 200 && r.objectRef?.name === name && r.objectRef.namespace === ns);
    const changedAt = changes.length === 0 ? Infinity : Date.parse(changes.at(-1)!.stageTimestamp);
    const listed = view.audit().some((r) => r.user.username === LEARNER && isRead(r) && apiOf(r) === 'core/v1' && covers(r, { namespace: ns, name, involvedObject: bumped?.involvedObject, type: bumped?.type, reason: bumped?.reason }) && readAfter(r, changedAt));
    return {
      items: [
        step(bumped !== undefined, `${name} for widget/${WIDGET.name} has count ${bumped?.count ?? 0} and a lastTimestamp after its firstTimestamp`, `no event for widget/${WIDGET.name} has a count above 1 and a lastTimestamp after its firstTimestamp`),
        step(changes.length > 0, `you changed it by hand (${changes.at(-1)?.verb ?? ''})`, bumped === undefined ? 'bump count and lastTimestamp by hand: kubectl patch event …' : `${name} was not patched by hand (it was created that way): kubectl patch it`),
        step(listed, 'you listed it after the change', `list it after the change: kubectl events --for widget/${WIDGET.name}`),
      ],
      notes: bumped === undefined ? [] : [`kubectl events and kubectl describe show it now as: ${eventInterval(bumped, view.now)}`],
    };
  },
};
