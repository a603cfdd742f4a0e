import { LEARNER, apiOf } from '../audit-log.js';
import type { AuditRecord } from '../audit-log.js';
import { block, step } from '../exercise.js';
import type { CheckItem, Exercise } from '../exercise.js';

function refused(records: AuditRecord[], api: 'core/v1' | 'events.k8s.io/v1', namespace: string): AuditRecord | undefined {
  return records.filter((r) => r.user.username === LEARNER && r.verb === 'create' && apiOf(r) === api && r.objectRef?.namespace === namespace && r.responseStatus?.code === 422 && /involvedObject|regarding/.test(r.responseStatus.message ?? '')).at(-1);
}

function item(records: AuditRecord[], api: 'core/v1' | 'events.k8s.io/v1', namespace: string): CheckItem {
  const r = refused(records, api, namespace);
  const field = api === 'core/v1' ? 'involvedObject' : 'regarding';
  return step(r !== undefined, `an event without ${field} was refused through ${api}: ${r?.responseStatus?.message ?? ''}`, `no create of an event without ${field} through ${api} refused in namespace ${namespace} yet`);
}

/** noTarget is exercise 2: an event without its object, and the API server's exact refusal. */
export const noTarget: Exercise = {
  number: 2,
  title: 'An event without its target',
  summary: 'an event without involvedObject (core/v1) and one without regarding (events.k8s.io/v1): the exact refusal',
  task: (ctx) =>
    [
      'An event is about an object. Leave the object out and see what the API server says, through each API.',
      '',
      block(`kubectl create -f - <<'EOF'
apiVersion: v1
kind: Event
metadata: { name: no-target.core }
type: Normal
reason: Orphan
message: nobody to talk about
EOF
kubectl create -f - <<EOF
apiVersion: events.k8s.io/v1
kind: Event
metadata: { name: no-target.events }
type: Normal
reason: Orphan
action: Nothing
note: nobody to talk about
reportingController: lab.kevents.dev/hand
reportingInstance: hand-0
eventTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
EOF`),
      '',
      'What you should see, twice (the field path is the core/v1 name even through events.k8s.io/v1,',
      'because both APIs validate the one stored form):',
      '    The Event "no-target.core" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace',
      '',
      `The rule is about namespaces: an event with no object namespace must live in default (or, with an`,
      `eventTime, kube-system). That is why this lab works in ${ctx.namespace}: in default, the same`,
      'object is accepted, and an event about nothing is stored.',
    ].join('\n'),
  check(view) {
    const records = view.audit();
    const ns = view.state.namespace;
    const accepted = records.filter((r) => r.user.username === LEARNER && r.verb === 'create' && r.objectRef?.namespace === 'default' && r.responseStatus?.code === 201);
    return Promise.resolve({
      items: [item(records, 'core/v1', ns), item(records, 'events.k8s.io/v1', ns)],
      notes: accepted.length > 0 ? [`In namespace default the API server accepted ${accepted.length} event(s) you created: there, an event needs no object.`] : [],
    });
  },
};
