import type { CoreEvent, ShellRole } from '../api/index.js';

/**
 * The catalogue's contract: a failure kind reads the events that show it,
 * extracts facts from them, states the cause in one sentence built from those
 * facts, and proposes next steps whose values are checked and quoted when the
 * command is written (see steps.ts).
 */

/** FAILURE_KIND_IDS are the catalogue's ids, as they appear in incidents' JSON. */
export const FAILURE_KIND_IDS = [
  'unschedulable-resources',
  'unschedulable-taint',
  'unschedulable-affinity',
  'unschedulable-volume',
  'unschedulable-cordoned',
  'preempted',
  'volume-provisioning',
  'volume-multi-attach',
  'mount-missing-source',
  'config-missing',
  'image-not-found',
  'image-pull-denied',
  'image-registry-unreachable',
  'image-invalid',
  'image-pull-backoff',
  'start-error',
  'crash-loop',
  'oom-node',
  'evicted-pressure',
  'evicted-ephemeral-storage',
  'probe-liveness',
  'probe-readiness',
  'create-forbidden-quota',
  'create-forbidden-serviceaccount',
  'create-forbidden-admission',
  'sandbox-failed',
  'node-not-ready',
  'node-disk',
  'hpa-metrics',
  'job-backoff-limit',
  'job-deadline',
  'dns-config',
  'other',
] as const;

/** FailureKindId is one of FAILURE_KIND_IDS. */
export type FailureKindId = (typeof FAILURE_KIND_IDS)[number];

/**
 * Facts are the values a kind reads from an event. Every match carries the
 * event's own `reason`, `message`, `objectKind`, `objectName` and `namespace`,
 * and `node` and `container` where the event tells them; each kind adds its own.
 */
export type Facts = Readonly<Record<string, string>>;

/**
 * StepWord is a word of a command: literal text we wrote, or a value from the
 * events with its role, checked for that role and then quoted with its literal
 * `prefix` (`spec.nodeName=`) as one word (a refused value: the prefix and the
 * role's placeholder, `spec.nodeName=<node>`). A prefix is our own text, never
 * event text.
 */
export type StepWord = string | { value: string | undefined; role: ShellRole; prefix?: string };

/** StepTemplate is a next step before its values are checked: the command's words and why to run it. */
export interface StepTemplate {
  words: readonly StepWord[];
  why: string;
}

/**
 * Role says how a kind takes part in an incident: a `cause` states why
 * something failed; a `symptom` shows that it failed and needs a cause
 * from another event (or says events do not record one).
 */
export type Role = 'cause' | 'symptom';

/**
 * Subject says which object a kind's trouble belongs to: the involved object
 * (and its owners), or the node it happened on, so that a node-wide warning on
 * every pod is one node's incident.
 */
export type Subject = 'object' | 'node';

/** FailureKind is one entry of the catalogue. */
export interface FailureKind {
  id: FailureKindId;
  role: Role;
  subject: Subject;
  /** reasons are the event reasons the kind reads (an event of another reason never matches). */
  reasons: readonly string[];
  /** match returns the kind-specific facts when the event shows this kind (a fact left undefined is dropped), undefined otherwise. */
  match(e: CoreEvent): Readonly<Record<string, string | undefined>> | undefined;
  /** cause states the trouble in one sentence from the facts. */
  cause(f: Facts): string;
  /** steps are the next steps, before their values are checked. */
  steps(f: Facts): StepTemplate[];
  /** explainedBy are the kinds that, seen with this symptom, are its cause (most telling first). */
  explainedBy?: readonly FailureKindId[];
}

/** FailureMatch is an event recognised by the catalogue: its kind and facts. */
export interface FailureMatch {
  kind: FailureKind;
  facts: Facts;
}
