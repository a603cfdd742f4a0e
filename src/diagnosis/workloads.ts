import type { FailureKind } from './kind.js';
import { defined, firstGroup, named, objectWords, present, said, theObject } from './text.js';

/** Workload controllers' failures: an autoscaler without metrics, a Job out of retries or time. */

/** POD_CAUSES are the kinds that tell why a Job's pods failed, most telling first. */
const POD_CAUSES = [
  'start-error',
  'config-missing',
  'mount-missing-source',
  'image-pull-denied',
  'image-not-found',
  'image-registry-unreachable',
  'image-invalid',
  'probe-liveness',
  'oom-node',
  'evicted-ephemeral-storage',
  'evicted-pressure',
  'node-not-ready',
  'image-pull-backoff',
  'crash-loop',
] as const;

/** WORKLOAD_KINDS are the autoscaler's and the Job controller's failure kinds. */
export const WORKLOAD_KINDS: readonly FailureKind[] = [
  {
    // pkg/controller/podautoscaler/horizontal.go: the metrics client's error as the message
    // (`failed to get %s utilization: %v`, `unable to fetch metrics from resource metrics API: …`,
    // `missing request for %s in container %s of Pod %s`).
    id: 'hpa-metrics',
    role: 'cause',
    subject: 'object',
    reasons: ['FailedGetResourceMetric', 'FailedComputeMetricsReplicas', 'FailedGetContainerResourceMetric', 'FailedGetPodsMetric', 'FailedGetObjectMetric', 'FailedGetExternalMetric'],
    match: (e) => {
      const m = e.message ?? '';
      const missing = /missing request for (\S+) in container (\S+) of Pod (\S+)/.exec(m);
      if (missing) return { metric: missing[1]!, container: missing[2]!, pod: missing[3]!, problem: 'missing-request' };
      const metric = firstGroup(/failed to get (\S+) (?:utilization|usage|resource metric)/, m) ?? firstGroup(/metrics for resource (\S+?):/, m);
      if (/could not find the requested resource|the server is currently unable to handle the request|no metrics returned|unable to fetch metrics|metrics\.k8s\.io/.test(m)) {
        return defined({ metric, problem: 'no-api', error: m });
      }
      return defined({ metric, problem: 'other', error: m });
    },
    cause: (f) =>
      f.problem === 'missing-request'
        ? `${theObject(f)} cannot scale${present(f.metric) ? ` on ${said(f.metric)}` : ''}: ${named('container', f.container)} of its pods sets no ${present(f.metric) ? `${said(f.metric)} ` : ''}request.`
        : f.problem === 'no-api'
          ? `${theObject(f)} cannot scale: it gets no ${present(f.metric) ? `${said(f.metric)} ` : ''}metrics from the metrics API (is metrics-server installed and healthy?).`
          : `${theObject(f)} cannot compute its replica count${present(f.error) ? `: ${said(f.error)}` : ''}.`,
    steps: (f) => [
      { words: ['kubectl', 'describe', ...objectWords(f)], why: "the autoscaler's conditions (ScalingActive) and targets" },
      f.problem === 'missing-request'
        ? { words: ['kubectl', 'get', 'pod', { value: f.pod, role: 'pod' }, '-n', { value: f.namespace, role: 'namespace' }, '-o', 'jsonpath={.spec.containers[*].resources.requests}'], why: "the pods' requests: utilization is measured against them" }
        : { words: ['kubectl', 'get', 'apiservice', 'v1beta1.metrics.k8s.io'], why: 'whether the resource metrics API is registered and available' },
    ],
  },
  {
    // pkg/controller/job/job_controller.go: `BackoffLimitExceeded` `Job has reached the specified backoff limit`.
    id: 'job-backoff-limit',
    role: 'symptom',
    subject: 'object',
    reasons: ['BackoffLimitExceeded'],
    match: () => ({}),
    cause: (f) => `${theObject(f)} failed: its pods kept failing until it reached its backoff limit; events do not record why they failed: read the failed pods' last state and logs.`,
    steps: (f) => [
      { words: ['kubectl', 'describe', ...objectWords(f)], why: "the Job's conditions and its pods' statuses" },
      { words: ['kubectl', 'logs', { value: f.objectName, role: 'name', prefix: 'job/' }, '-n', { value: f.namespace, role: 'namespace' }], why: 'the output of one of its pods' },
    ],
    explainedBy: POD_CAUSES,
  },
  {
    // job_controller.go: `DeadlineExceeded` `Job was active longer than specified deadline`.
    id: 'job-deadline',
    role: 'cause',
    subject: 'object',
    reasons: ['DeadlineExceeded'],
    match: () => ({}),
    cause: (f) => `${theObject(f)} was stopped: it ran longer than its activeDeadlineSeconds.`,
    steps: (f) => [{ words: ['kubectl', 'get', ...objectWords(f), '-o', 'jsonpath={.spec.activeDeadlineSeconds} {.status.startTime}'], why: 'the deadline and when the Job started' }],
  },
];
