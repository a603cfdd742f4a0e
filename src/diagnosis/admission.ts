import type { Facts, FailureKind, StepTemplate } from './kind.js';
import { defined, firstGroup, inNamespace, objectWords, present, said, theObject } from './text.js';

/**
 * Refused creates: a controller (ReplicaSet, Job, DaemonSet, StatefulSet,
 * CronJob) writes `FailedCreate` with the API server's refusal, and no pod
 * exists to carry an event of its own. The controllers' formats:
 * pkg/controller/controller_utils.go `Error creating: %v`,
 * pkg/controller/statefulset/stateful_pod_control.go `create Pod %s in
 * StatefulSet %s failed error: %v`, pkg/controller/cronjob `Error creating job: %v`.
 * The refusals: staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go
 * (`exceeded quota: %s, requested: %s, used: %s, limited: %s`, `failed quota: %s: must specify %s`),
 * plugin/pkg/admission/serviceaccount/admission.go (`error looking up service account %s/%s: %v`),
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/errors (`admission webhook %q denied the request: %s`)
 * and staging/src/k8s.io/pod-security-admission/admission (`violates PodSecurity %q: %s`).
 */

const CREATE_REASONS = ['FailedCreate', 'FailedCreatePodContainer'];

function refusal(message: string): string | undefined {
  const m = /(?:Error creating(?: job)?: |failed error: )([\s\S]*)$/.exec(message);
  return m?.[1]?.trim();
}

/**
 * CREATED names what a refused create was for, from the API server's `<resource> "<name>" is forbidden`: a
 * StatefulSet's claims and a CronJob's Jobs are refused as its pods are.
 */
const CREATED: Readonly<Record<string, string>> = { persistentvolumeclaims: 'PersistentVolumeClaims', 'jobs.batch': 'Jobs' };

/** creates is what a refusal kept the controller from creating: `pods` unless the refusal names another resource. */
function creates(refused: string): string {
  return CREATED[firstGroup(/^(\S+) "[^"]*" is forbidden/, refused) ?? ''] ?? 'pods';
}

/** theQuota is `ResourceQuota "compute"`, or `a ResourceQuota`. */
function theQuota(f: Facts): string {
  return present(f.quota) ? `ResourceQuota ${said(f.quota)}` : 'a ResourceQuota';
}

/** usage is ` (requested "…", used "…", limited "…")` with the parts the refusal gave. */
function usage(f: Facts): string {
  const parts = (['requested', 'used', 'limited'] as const).filter((k) => present(f[k])).map((k) => `${k} ${said(f[k])}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** webhook is `admission webhook "x"`, or `an admission webhook`. */
function webhook(f: Facts): string {
  return present(f.webhook) ? `admission webhook ${said(f.webhook)}` : 'an admission webhook';
}

/** detail is the refusal's own words in brackets, or nothing when it gave none. */
function detail(f: Facts): string {
  return present(f.detail) ? ` (${said(f.detail)})` : '';
}

function quotaStep(f: Facts): StepTemplate {
  return {
    words: ['kubectl', 'describe', 'resourcequota', ...(!present(f.quota) ? [] : [{ value: f.quota, role: 'name' as const }]), '-n', { value: f.namespace, role: 'namespace' }],
    why: "the quota's limits and what is already used against them",
  };
}

function controllerStep(f: Facts): StepTemplate {
  return { words: ['kubectl', 'describe', ...objectWords(f)], why: 'the controller and its conditions (ReplicaFailure)' };
}

/** ADMISSION_KINDS are the refusals of a controller's creates. */
export const ADMISSION_KINDS: readonly FailureKind[] = [
  {
    id: 'create-forbidden-quota',
    role: 'cause',
    subject: 'object',
    reasons: CREATE_REASONS,
    match: (e) => {
      const r = refusal(e.message ?? '');
      if (r === undefined) return undefined;
      const exceeded = /exceeded quota: ([^,]+), requested: (.+?), used: (.+?), limited: (.+)$/.exec(r);
      if (exceeded) {
        const resources = [...exceeded[2]!.matchAll(/([\w./-]+)=/g)].map((x) => x[1]!);
        return { quota: exceeded[1]!.trim(), requested: exceeded[2]!.trim(), used: exceeded[3]!.trim(), limited: exceeded[4]!.trim(), resources: resources.join(', '), problem: 'exceeded', creates: creates(r) };
      }
      const unspecified = /failed quota: ([^:]+): must specify (.+)$/.exec(r);
      if (unspecified) return { quota: unspecified[1]!.trim(), missing: unspecified[2]!.trim(), problem: 'unspecified', creates: creates(r) };
      return undefined;
    },
    cause: (f) =>
      f.problem === 'unspecified'
        ? `${theObject(f)} cannot create ${f.creates ?? 'pods'}: ${theQuota(f)} requires them to specify ${present(f.missing) ? said(f.missing) : 'limits or requests'}.`
        : `${theObject(f)} cannot create ${f.creates ?? 'pods'}: ${theQuota(f)} would be exceeded${usage(f)}.`,
    steps: (f) => [quotaStep(f), controllerStep(f)],
  },
  {
    id: 'create-forbidden-serviceaccount',
    role: 'cause',
    subject: 'object',
    reasons: CREATE_REASONS,
    match: (e) => {
      const r = refusal(e.message ?? '');
      if (r === undefined) return undefined;
      const sa = /error looking up service account ([^/\s]+)\/([^:\s]+)/.exec(r);
      if (sa) return { serviceAccount: sa[2]! };
      const missing = firstGroup(/serviceaccounts? "([^"]*)" not found/, r);
      return missing !== undefined ? { serviceAccount: missing } : undefined;
    },
    cause: (f) => `${theObject(f)} cannot create pods: ${present(f.serviceAccount) ? `their ServiceAccount ${said(f.serviceAccount)} does` : 'the ServiceAccount they name does'} not exist${inNamespace(f)}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'serviceaccount', { value: f.serviceAccount, role: 'name' }, '-n', { value: f.namespace, role: 'namespace' }], why: 'confirms it is missing: create it, or fix serviceAccountName in the pod template' },
      controllerStep(f),
    ],
  },
  {
    id: 'create-forbidden-admission',
    role: 'cause',
    subject: 'object',
    reasons: CREATE_REASONS,
    match: (e) => {
      const r = refusal(e.message ?? '');
      if (r === undefined) return undefined;
      const pss = /violates PodSecurity "([^"]*)":\s*([\s\S]*)$/.exec(r);
      if (pss) return { policy: `PodSecurity ${pss[1]!}`, level: pss[1]!, detail: pss[2]!.trim(), problem: 'pod-security' };
      const webhook = /admission webhook "([^"]*)" denied the request:?\s*([\s\S]*)$/.exec(r);
      if (webhook) return { webhook: webhook[1]!, detail: webhook[2]!.trim(), problem: 'webhook', creates: creates(r) };
      const calling = /failed calling webhook "([^"]*)":\s*([\s\S]*)$/.exec(r);
      if (calling) return { webhook: calling[1]!, detail: calling[2]!.trim(), problem: 'webhook-unreachable', creates: creates(r) };
      // Any other refusal of the API server (a LimitRange, another admission plugin): its own words.
      const forbidden = firstGroup(/is forbidden: ([\s\S]*)$/, r);
      return forbidden !== undefined ? defined({ detail: forbidden, problem: 'forbidden', creates: creates(r) }) : undefined;
    },
    cause: (f) =>
      f.problem === 'pod-security'
        ? `${theObject(f)} cannot create pods: they violate the namespace's PodSecurity level${present(f.level) ? ` ${said(f.level)}` : ''}${detail(f)}.`
        : f.problem === 'webhook'
          ? `${theObject(f)} cannot create ${f.creates ?? 'pods'}: ${webhook(f)} denies them${detail(f)}.`
          : f.problem === 'webhook-unreachable'
            ? `${theObject(f)} cannot create ${f.creates ?? 'pods'}: the API server cannot call ${webhook(f)}${detail(f)}.`
            : `${theObject(f)} cannot create ${f.creates ?? 'pods'}: the API server refuses them${detail(f)}.`,
    steps: (f) => [
      f.problem === 'pod-security'
        ? { words: ['kubectl', 'get', 'namespace', { value: f.namespace, role: 'namespace' }, '--show-labels'], why: 'the pod-security.kubernetes.io labels that set the level the pods must meet' }
        : f.webhook !== undefined
          ? { words: ['kubectl', 'get', 'validatingwebhookconfigurations,mutatingwebhookconfigurations'], why: 'the webhook configurations, to find the one named and who owns it' }
          : { words: ['kubectl', 'get', 'limitrange', '-n', { value: f.namespace, role: 'namespace' }], why: "the namespace's LimitRanges, one source of such refusals" },
      controllerStep(f),
    ],
  },
];
