import { LEARNER, apiOf, covers, isRead } from '../audit-log.js';
import { WIDGET, aboutWidget, block, createdAt, readAfter, step } from '../exercise.js';
import type { Exercise } from '../exercise.js';
import { widgetRef } from './two-apis.js';

/** critical is exercise 3: a type outside the convention, stored and listed, refused by kubectl events --types. */
export const critical: Exercise = {
  number: 3,
  title: 'A type outside the convention',
  summary: 'type: Critical is stored and listed by kubectl get events, and refused by kubectl events --types=Critical',
  task: (ctx) =>
    [
      'core/v1 does not check an event\'s type. Write one of type Critical about the widget:',
      '',
      block(`NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl create -f - <<EOF
apiVersion: v1
kind: Event
metadata: { name: demo.critical }
involvedObject: ${widgetRef(ctx.namespace)}
type: Critical
reason: DiskAlmostFull
message: Volume of widget demo is 97% full
source: { component: widget-controller }
firstTimestamp: "$NOW"
lastTimestamp: "$NOW"
count: 1
EOF
kubectl get events --field-selector type=Critical
kubectl events --types=Critical`),
      '',
      'What you should see: the event is stored, and kubectl get events lists it with TYPE Critical;',
      'kubectl events refuses the filter before it sends anything:',
      '    error: valid --types are Normal or Warning',
      'Try the same through events.k8s.io/v1: that API checks the type, and refuses it with',
      '    The Event "demo.critical" is invalid: type: Invalid value: "": has invalid value: Critical',
      'The convention is not enforced where events are written, only where they are read.',
    ].join('\n'),
  async check(view) {
    const ns = view.state.namespace;
    const event = (await view.events()).find((e) => aboutWidget(e, ns) && e.type === 'Critical');
    const ref = { namespace: ns, name: event?.metadata.name ?? '', involvedObject: event?.involvedObject, type: event?.type, reason: event?.reason };
    const listed = event !== undefined && view.audit().some((r) => r.user.username === LEARNER && isRead(r) && r.verb !== 'get' && apiOf(r) === 'core/v1' && covers(r, ref) && readAfter(r, createdAt(view, event)));
    const refused = view.audit().filter((r) => r.user.username === LEARNER && r.verb === 'create' && apiOf(r) === 'events.k8s.io/v1' && r.responseStatus?.code === 422 && /type: Invalid value/.test(r.responseStatus.message ?? '')).at(-1);
    return {
      items: [
        step(event !== undefined, `an event of type Critical for widget/${WIDGET.name} is stored: ${event?.metadata.name ?? ''}`, `no event of type Critical found for widget/${WIDGET.name}`),
        step(listed, 'it was listed through core/v1 (kubectl get events)', `list it: kubectl get events${event === undefined ? ' (once it exists)' : ''}`),
      ],
      notes: [
        'kubectl events --types=Critical is refused by kubectl itself (error: valid --types are Normal or Warning): no request reaches the API server, so the lab cannot see it; run it and compare.',
        ...(refused !== undefined ? [`events.k8s.io/v1 refused your Critical event, as it should: ${refused.responseStatus?.message ?? ''}`] : []),
      ],
    };
  },
};
