import type { CoreEvent, CoreEventList } from '../api/index.js';
import { RestClient, UrlConnection } from '../client/index.js';
import { readAuditLog } from './audit-log.js';
import type { AuditRecord } from './audit-log.js';
import { createLabApi } from './lab-api.js';
import type { LabState } from './lab-state.js';
import type { Taint } from './real-node-config.js';

/** ExerciseContext is what an exercise's text names: the lab's namespace, nodes, TTL and archive. */
export interface ExerciseContext {
  namespace: string;
  nodes: { count: number; cpu: string; memory: string };
  eventTtl: string;
  /** realNode is the lab's real node (`lab up --kubelet`): its name, its taint and the image its pods run. */
  realNode?: { name: string; taint: Taint; busybox: string };
}

/** exerciseContext is what the exercises' texts name of a running lab. */
export function exerciseContext(s: LabState): ExerciseContext {
  return {
    namespace: s.namespace,
    nodes: { count: s.nodes.names.length, cpu: s.nodes.cpu, memory: s.nodes.memory },
    eventTtl: s.eventTtl,
    ...(s.realNode !== undefined ? { realNode: { name: s.realNode.name, taint: s.realNode.taint, busybox: s.realNode.busybox } } : {}),
  };
}

/** CheckItem is one step of an exercise, done or missing, in words. */
export interface CheckItem {
  ok: boolean;
  text: string;
}

/** CheckResult is the answer of `kevents lab check N`: its steps, and what the learner should have seen. */
export interface CheckResult {
  items: CheckItem[];
  notes: string[];
}

/** Exercise is one exercise of the course: its text and its check. */
export interface Exercise {
  number: number;
  title: string;
  /** summary is one line for `lab exercises`. */
  summary: string;
  /** task is the text of `lab exercise N`: the goal, the commands to try, what to see. */
  task(ctx: ExerciseContext): string;
  check(view: LabView): Promise<CheckResult>;
}

/** LabView is what a check reads, each part at most once: the cluster, the archive and the audit log of the learner's requests. */
export interface LabView {
  state: LabState;
  now: number;
  /** events are the cluster's events of the lab's namespace, through core/v1. */
  events(): Promise<CoreEvent[]>;
  /** archiveEvents are the archive's events of the lab's namespace (kept after the cluster forgets them). */
  archiveEvents(): Promise<CoreEvent[]>;
  /** audit is the learner's requests on events, oldest first. */
  audit(): AuditRecord[];
  /** get reads one object of the cluster, undefined when it does not exist. */
  get<T>(path: string): Promise<T | undefined>;
  close(): void;
}

function once<T>(f: () => T): () => T {
  let done = false;
  let value: T | undefined;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value as T;
  };
}

/** createLabView reads a running lab for the checks. */
export function createLabView(state: LabState, now = Date.now()): LabView {
  const api = createLabApi({ server: state.apiServer, caFile: state.caFile, token: state.checkToken });
  const archive = new RestClient(new UrlConnection(state.archive), { timeoutMs: 10_000, userAgent: 'kevents-lab' });
  const path = `/api/v1/namespaces/${state.namespace}/events`;
  return {
    state,
    now,
    events: once(async () => (await api.get<CoreEventList>(path)).items),
    archiveEvents: once(async () => (await archive.request<CoreEventList>({ method: 'GET', path, verb: 'list events' })).items),
    audit: once(() => readAuditLog(state.auditLog)),
    get: (p) => api.getOrUndefined(p),
    close: () => api.close(),
  };
}

/** WIDGET is the custom resource the exercises write events about (it has no controller: the learner plays it). */
export const WIDGET = { group: 'lab.kevents.dev', version: 'v1', kind: 'Widget', plural: 'widgets', name: 'demo' } as const;

/** aboutWidget tells whether an event is about widget/demo of the namespace. */
export function aboutWidget(e: CoreEvent, namespace: string): boolean {
  const o = e.involvedObject;
  return o.kind === WIDGET.kind && o.name === WIDGET.name && (o.namespace ?? namespace) === namespace;
}

/** createdThrough is the API an event was created through, read from its first managedFields entry. */
export function createdThrough(e: CoreEvent): 'core/v1' | 'events.k8s.io/v1' | undefined {
  const entries = (e.metadata as { managedFields?: { apiVersion?: string }[] }).managedFields ?? [];
  const v = entries[0]?.apiVersion;
  if (v === 'v1') return 'core/v1';
  if (v === 'events.k8s.io/v1') return 'events.k8s.io/v1';
  return undefined;
}

/** secondsOf is an RFC 3339 time in whole seconds (creationTimestamp has no fraction). */
export function secondsOf(t: string | null | undefined): number {
  const ms = t === null || t === undefined ? NaN : Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * createdAt is when the learner created an event, in Unix ms: the audit log's
 * time of the create where it has one (to the microsecond), else the start of
 * its creationTimestamp's second.
 */
export function createdAt(view: LabView, event: CoreEvent): number {
  const name = event.metadata.name ?? '';
  const create = view.audit().find((r) => r.verb === 'create' && r.responseStatus?.code === 201 && r.objectRef?.name === name && r.objectRef.namespace === event.metadata.namespace);
  return create !== undefined ? Date.parse(create.stageTimestamp) : secondsOf(event.metadata.creationTimestamp) * 1000;
}

/** readAfter tells whether an audited request was received after a moment (Unix ms). */
export function readAfter(r: AuditRecord, ms: number): boolean {
  return Date.parse(r.requestReceivedTimestamp) > ms;
}

/** millicores reads a CPU quantity (`2`, `1500m`, `0.5`) in millicores. */
export function millicores(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000);
}

/** block indents a shell snippet for an exercise's text. */
export function block(lines: string): string {
  return lines
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

/** step makes a CheckItem. */
export function step(ok: boolean, done: string, missing: string): CheckItem {
  return { ok, text: ok ? done : missing };
}
