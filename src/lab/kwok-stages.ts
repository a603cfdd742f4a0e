import { stringify } from 'yaml';

/** FAIL_LABEL marks a pod the lab's kwok stages make crash: `kubectl run crashy --image=busybox -l lab.kevents.dev/fail=true`. */
export const FAIL_LABEL = 'lab.kevents.dev/fail';

/** KWOK_COMPONENT is the `source.component` of every event kwok writes: the lab's simulated kubelet events carry it. */
export const KWOK_COMPONENT = 'kwok_controller';

/** SIMULATED_REASONS are the kubelet reasons the lab's stages write (through kwok, not a kubelet). */
export const SIMULATED_REASONS = ['Pulling', 'Pulled', 'Created', 'Started', 'Unhealthy', 'BackOff', 'Killing'] as const;

type Expression = { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] };

const live: Expression = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' };
const phase = (p: string): Expression => ({ key: '.status.phase', operator: 'In', values: [p] });
const condition = (type: string, operator: Expression['operator'], values?: string[]): Expression => ({
  key: `.status.conditions.[] | select( .type == "${type}" ) | .status`,
  operator,
  ...(values !== undefined ? { values } : {}),
});
const failing = (yes: boolean): Expression => ({ key: `.metadata.labels["${FAIL_LABEL}"]`, operator: yes ? 'In' : 'NotIn', values: ['true'] });

/** containers renders one container status per container of the pod, in a given state. */
function containers(state: string, ready: boolean, started: boolean): string {
  return [
    'containerStatuses:',
    '{{ range .spec.containers }}',
    '- image: {{ .image | Quote }}',
    '  name: {{ .name | Quote }}',
    `  ready: ${ready}`,
    `  started: ${started}`,
    '  restartCount: 0',
    '  state:',
    ...state.split('\n').map((l) => `    ${l}`),
    '{{ end }}',
  ].join('\n');
}

function conditions(entries: Record<string, 'True' | 'False'>): string {
  return ['conditions:', ...Object.entries(entries).flatMap(([type, status]) => [`- type: ${type}`, `  status: "${status}"`, '  lastTransitionTime: {{ $now | Quote }}'])].join('\n');
}

interface PodStage {
  name: string;
  match: Expression[];
  delayMs: [number, number];
  event: { type: 'Normal' | 'Warning'; reason: (typeof SIMULATED_REASONS)[number]; message: string };
  status?: string[];
  delete?: boolean;
}

/**
 * POD_STAGES walk a fake pod through the kubelet's reasons, one stage per
 * event: each stage's status is what the next stage matches. A pod labelled
 * FAIL_LABEL=true starts, fails its readiness probe, exits and backs off, and
 * starts again, forever, as a crash loop does (kwok's recorder aggregates the
 * repeats, so its listing shows `(xN over T)`). kwok's event messages are
 * fixed texts: a kubelet's name the image and container.
 */
const POD_STAGES: PodStage[] = [
  {
    name: 'kevents-lab-pulling',
    match: [live, { key: '.status.podIP', operator: 'DoesNotExist' }],
    delayMs: [200, 800],
    event: { type: 'Normal', reason: 'Pulling', message: 'Pulling image' },
    status: [
      'phase: Pending',
      'hostIP: {{ NodeIPWith .spec.nodeName | Quote }}',
      'podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}',
      'startTime: {{ $now | Quote }}',
      conditions({ PodReadyToStartContainers: 'False', Initialized: 'False', Ready: 'False', ContainersReady: 'False' }),
      containers('waiting:\n  reason: ContainerCreating', false, false),
    ],
  },
  {
    name: 'kevents-lab-pulled',
    match: [live, phase('Pending'), condition('PodReadyToStartContainers', 'In', ['False'])],
    delayMs: [500, 1500],
    event: { type: 'Normal', reason: 'Pulled', message: 'Successfully pulled image' },
    status: [conditions({ PodReadyToStartContainers: 'True' })],
  },
  {
    name: 'kevents-lab-created',
    match: [live, phase('Pending'), condition('PodReadyToStartContainers', 'In', ['True']), condition('Initialized', 'NotIn', ['True'])],
    delayMs: [100, 400],
    event: { type: 'Normal', reason: 'Created', message: 'Created container' },
    status: [conditions({ Initialized: 'True' })],
  },
  {
    name: 'kevents-lab-started',
    match: [live, phase('Pending'), condition('Initialized', 'In', ['True']), failing(false)],
    delayMs: [100, 400],
    event: { type: 'Normal', reason: 'Started', message: 'Started container' },
    status: ['phase: Running', conditions({ Ready: 'True', ContainersReady: 'True' }), containers('running:\n  startedAt: {{ $now | Quote }}', true, true)],
  },
  {
    name: 'kevents-lab-started-to-fail',
    match: [live, phase('Pending'), condition('Initialized', 'In', ['True']), failing(true)],
    delayMs: [100, 400],
    event: { type: 'Normal', reason: 'Started', message: 'Started container' },
    status: ['phase: Running', containers('running:\n  startedAt: {{ $now | Quote }}', false, true)],
  },
  {
    name: 'kevents-lab-unhealthy',
    match: [live, phase('Running'), failing(true), { key: '.status.containerStatuses.[] | .state.running.startedAt', operator: 'Exists' }],
    delayMs: [2000, 3000],
    event: { type: 'Warning', reason: 'Unhealthy', message: 'Readiness probe failed: HTTP probe failed with statuscode: 500' },
    status: [containers('terminated:\n  exitCode: 1\n  reason: Error\n  startedAt: {{ $now | Quote }}\n  finishedAt: {{ $now | Quote }}', false, false)],
  },
  {
    name: 'kevents-lab-backoff',
    match: [live, phase('Running'), failing(true), { key: '.status.containerStatuses.[] | .state.terminated.reason', operator: 'In', values: ['Error'] }],
    delayMs: [500, 1000],
    event: { type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container' },
    status: [containers('waiting:\n  reason: CrashLoopBackOff\n  message: back-off 10s restarting failed container', false, false)],
  },
  {
    name: 'kevents-lab-restart',
    match: [live, phase('Running'), failing(true), { key: '.status.containerStatuses.[] | .state.waiting.reason', operator: 'In', values: ['CrashLoopBackOff'] }],
    delayMs: [10_000, 11_000],
    event: { type: 'Normal', reason: 'Started', message: 'Started container' },
    status: [containers('running:\n  startedAt: {{ $now | Quote }}', false, true)],
  },
  {
    name: 'kevents-lab-delete',
    match: [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }],
    delayMs: [0, 200],
    event: { type: 'Normal', reason: 'Killing', message: 'Stopping container' },
    delete: true,
  },
];

function stageObject(s: PodStage): unknown {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: s.name },
    spec: {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: { matchExpressions: s.match },
      delay: { durationMilliseconds: s.delayMs[0], jitterDurationMilliseconds: s.delayMs[1] },
      next: {
        event: s.event,
        ...(s.delete === true ? { finalizers: { empty: true }, delete: true } : {}),
        ...(s.status !== undefined ? { statusTemplate: ['{{ $now := Now }}', ...s.status].join('\n') + '\n' } : {}),
      },
    },
  };
}

/** kwokStagesYaml is the `--config` file of the lab's kwok: the pod stages (node stages are kwok's defaults). */
export function kwokStagesYaml(): string {
  return POD_STAGES.map((s) => stringify(stageObject(s), { lineWidth: 0 })).join('---\n');
}
