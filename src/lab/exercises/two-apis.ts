import { shellArg, shellCommand } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { LEARNER, apiOf, covers, isRead } from '../audit-log.js';
import { WIDGET, aboutWidget, block, createdAt, createdThrough, readAfter, step } from '../exercise.js';
import type { CheckItem, Exercise, LabView } from '../exercise.js';

/** FIELD_TABLE is the course's table: one stored event, two sets of names. */
export const FIELD_TABLE = [
  '    |          | core/v1                        | events.k8s.io/v1                        |',
  '    |----------|--------------------------------|-----------------------------------------|',
  '    | target   | involvedObject                 | regarding                               |',
  '    | text     | message                        | note                                    |',
  '    | reporter | source.component (source.host) | reportingController, reportingInstance  |',
  '    | time     | firstTimestamp, lastTimestamp  | eventTime (deprecatedFirstTimestamp, …) |',
  '    | repeats  | count                          | series.count                            |',
].join('\n');

const CRD = `kubectl apply -f - <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${WIDGET.plural}.${WIDGET.group}
spec:
  group: ${WIDGET.group}
  scope: Namespaced
  names: { kind: ${WIDGET.kind}, plural: ${WIDGET.plural}, singular: widget, listKind: WidgetList }
  versions:
  - name: ${WIDGET.version}
    served: true
    storage: true
    schema:
      openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
EOF
kubectl wait --for condition=Established crd/${WIDGET.plural}.${WIDGET.group}
kubectl apply -f - <<'EOF'
apiVersion: ${WIDGET.group}/${WIDGET.version}
kind: ${WIDGET.kind}
metadata: { name: ${WIDGET.name} }
spec: { size: 3 }
EOF
WIDGET_UID=$(kubectl get widget ${WIDGET.name} -o jsonpath='{.metadata.uid}')`;

/** widgetRef is the involvedObject/regarding of widget/demo in a shell snippet ($WIDGET_UID set by exercise 1). */
export function widgetRef(namespace: string): string {
  return `{ apiVersion: ${WIDGET.group}/${WIDGET.version}, kind: ${WIDGET.kind}, name: ${WIDGET.name}, namespace: ${namespace}, uid: $WIDGET_UID }`;
}

function events(namespace: string): string {
  return `NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl create -f - <<EOF
apiVersion: v1
kind: Event
metadata: { name: demo.core }
involvedObject: ${widgetRef(namespace)}
type: Normal
reason: ReconcileStarted
message: Reconciling widget demo (written by hand through core/v1)
source: { component: widget-controller }
firstTimestamp: "$NOW"
lastTimestamp: "$NOW"
count: 1
EOF
kubectl create -f - <<EOF
apiVersion: events.k8s.io/v1
kind: Event
metadata: { name: demo.events }
regarding: ${widgetRef(namespace)}
type: Normal
reason: ReconcileSucceeded
action: Reconcile
note: Widget demo is ready (written by hand through events.k8s.io/v1)
reportingController: ${WIDGET.group}/widget-controller
reportingInstance: widget-controller-0
eventTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
EOF`;
}

function madeThrough(list: CoreEvent[], api: 'core/v1' | 'events.k8s.io/v1', uid: string | undefined): { event?: CoreEvent; item: CheckItem } {
  const candidates = list.filter((e) => createdThrough(e) === api);
  const event = candidates.find((e) => uid !== undefined && e.involvedObject.uid === uid);
  if (event !== undefined) return { event, item: step(true, `an event for widget/${WIDGET.name} made through ${api}: ${event.metadata.name ?? ''}`, '') };
  const target = api === 'core/v1' ? 'involvedObject' : 'regarding';
  if (candidates.length > 0) {
    return { item: step(false, '', `the ${api} event ${candidates[0]!.metadata.name ?? ''} has no ${target}.uid, or not the widget's: kubectl describe widget ${WIDGET.name} cannot find it (set uid to $(kubectl get widget ${WIDGET.name} -o jsonpath='{.metadata.uid}'))`) };
  }
  return { item: step(false, '', `no event for widget/${WIDGET.name} made through ${api} yet`) };
}

function readBack(view: LabView, event: CoreEvent | undefined, through: 'core/v1' | 'events.k8s.io/v1'): CheckItem {
  const made = through === 'core/v1' ? 'events.k8s.io/v1' : 'core/v1';
  if (event === undefined) return step(false, '', `read the ${made} event back through ${through} (once it exists)`);
  const ref = { namespace: event.metadata.namespace ?? view.state.namespace, name: event.metadata.name ?? '', involvedObject: event.involvedObject, type: event.type, reason: event.reason };
  const read = view.audit().some((r) => r.user.username === LEARNER && isRead(r) && apiOf(r) === through && covers(r, ref) && readAfter(r, createdAt(view, event)));
  const name = shellArg(ref.name, 'name');
  const command = (through === 'core/v1' ? shellCommand`kubectl get events ${name} -o yaml` : shellCommand`kubectl get events.events.k8s.io ${name} -o yaml`).command;
  return step(read, `${ref.name} (made through ${made}) was read back through ${through}`, `${ref.name} (made through ${made}) was not read back through ${through} yet: ${command}`);
}

/** twoApis is exercise 1: a custom resource with no controller, and an event for it through each API, read back through the other. */
export const twoApis: Exercise = {
  number: 1,
  title: 'One event, two APIs',
  summary: 'a CRD and a custom resource; an event for it through core/v1 and one through events.k8s.io/v1, each read back through the other API',
  task: (ctx) =>
    [
      'Events are stored once and served by two APIs with different field names. Play the controller',
      `of a custom resource that has none: create widget/${WIDGET.name} and write one event for it through each API.`,
      '',
      'Create the CRD and the widget:',
      block(CRD),
      '',
      'Write an event through each API (the uid ties it to the widget, so kubectl describe finds it):',
      block(events(ctx.namespace)),
      '',
      'Read each back through the other API:',
      block(`kubectl get events.events.k8s.io demo.core -o yaml
kubectl get events demo.events -o yaml
kubectl describe widget ${WIDGET.name}`),
      '',
      'What you should see: the same objects under the other names. demo.core through events.k8s.io/v1',
      'has regarding, note, deprecatedSource, deprecatedFirstTimestamp and no eventTime; demo.events',
      'through core/v1 has involvedObject, message, reportingComponent, eventTime, an empty source and no',
      'firstTimestamp. The fields, side by side:',
      FIELD_TABLE,
    ].join('\n'),
  async check(view) {
    const crd = await view.get<{ status?: { conditions?: { type: string; status: string }[] } }>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${WIDGET.plural}.${WIDGET.group}`);
    const established = crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true;
    const widget = established ? await view.get<{ metadata: { uid?: string } }>(`/apis/${WIDGET.group}/${WIDGET.version}/namespaces/${view.state.namespace}/${WIDGET.plural}/${WIDGET.name}`) : undefined;
    const mine = (await view.events()).filter((e) => aboutWidget(e, view.state.namespace));
    const core = madeThrough(mine, 'core/v1', widget?.metadata.uid);
    const modern = madeThrough(mine, 'events.k8s.io/v1', widget?.metadata.uid);
    return {
      items: [
        step(established, `the CRD ${WIDGET.plural}.${WIDGET.group} is established`, `no established CustomResourceDefinition ${WIDGET.plural}.${WIDGET.group}: apply the CRD above`),
        step(widget !== undefined, `widget/${WIDGET.name} exists in ${view.state.namespace}`, `no widget/${WIDGET.name} in namespace ${view.state.namespace}`),
        core.item,
        modern.item,
        readBack(view, core.event, 'events.k8s.io/v1'),
        readBack(view, modern.event, 'core/v1'),
      ],
      notes: ['The same fields under their two names:', FIELD_TABLE],
    };
  },
};
