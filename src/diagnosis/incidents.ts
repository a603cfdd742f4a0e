import type { CoreEvent, Incident, IncidentList, IncidentStart, Occurrence } from '../api/index.js';
import { cutText, eventCluster, eventLastMs } from '../api/index.js';
import { formatTimelineTime, objectKey, scheduledNode, scopeObjects, timelineEntries, timelineRow } from '../timeline/index.js';
import type { OccurrenceEntry, OwnerLink } from '../timeline/index.js';
import { classify } from './catalogue.js';
import type { FailureKindId, FailureMatch } from './kind.js';
import { stepHints } from './steps.js';
import { indexProgress } from './progress.js';
import { findRoots } from './roots.js';
import type { Roots } from './roots.js';

/**
 * Incidents: a window's failure events grouped by the object they are about
 * (its highest owner, or the node for node-wide trouble), each group's current
 * failure joined to the event that explains it, with a start the data gives.
 */

/** IncidentInput is what incidents are built from: the events read, their history, recorded owners and the window. */
export interface IncidentInput {
  events: readonly CoreEvent[];
  occurrences?: readonly Occurrence[] | undefined;
  owners?: readonly OwnerLink[] | undefined;
  /** since (inclusive) and until (exclusive), Unix ms: an incident has failure events in this window. */
  since?: number | undefined;
  until?: number | undefined;
  /** now is the end of an open window, for `ongoing` (default: the clock). */
  now?: number | undefined;
}

/**
 * JOIN_SLACK_MS is how long before a failure is reported its cause may have
 * stopped and still explain it: the Job controller's pod back-off caps at 6
 * minutes and the kubelet's restart back-off at 5, so the last failing pod can
 * end that long before the Job gives up.
 */
export const JOIN_SLACK_MS = 10 * 60_000;

/**
 * ONGOING_MS: an incident whose failure events were reported this close to
 * the window's end is ongoing. Retries back off to at most the controllers'
 * workqueue cap (1000 s), so a failure still happening repeats within it.
 */
export const ONGOING_MS = 20 * 60_000;

/**
 * CONTINUITY_GAP_MS: an incident's start reaches back before the window over
 * occurrences no further apart than this (a failure that kept repeating), not
 * to a folded first time from an unrelated earlier episode.
 */
export const CONTINUITY_GAP_MS = ONGOING_MS;

/** WARM_UP_READINESS_FAILURES: a pod's readiness failures that stopped after at most this many (the probe's default failureThreshold) are a container warming up, as in any healthy rollout. */
export const WARM_UP_READINESS_FAILURES = 3;

/** MAX_EVIDENCE_ROWS bounds an incident's evidence: its first and last rows, half each. */
export const MAX_EVIDENCE_ROWS = 100;

/** Sighting is one failure event seen in the window: its match and its occurrences. */
interface Sighting {
  event: CoreEvent;
  match: FailureMatch;
  /** all are the event's occurrences, window or not; inWindow those within it. */
  all: OccurrenceEntry[];
  inWindow: OccurrenceEntry[];
  firstMs: number;
  lastMs: number;
  count: number;
  /** object is the event's `Kind/name`; group the key of the incident it belongs to. */
  object: string;
  group: string;
  /** resolved: the pod got past this step after its last occurrence (progress.ts). */
  resolved: boolean;
}

interface Group {
  key: string;
  cluster: string;
  namespace: string;
  root: string;
  sightings: Sighting[];
}

function kindOf(s: Sighting): FailureKindId {
  return s.match.kind.id;
}

function podKey(cluster: string, namespace: string, pod: string): string {
  return `${cluster}\u0000${namespace}\u0000${pod}`;
}

function namespaceOf(e: CoreEvent): string {
  return e.involvedObject.namespace ?? e.metadata.namespace ?? '';
}

/**
 * buildIncidents groups the window's failure events into incidents, most
 * recent first. The result depends on the events and occurrences given, never
 * on their order.
 */
export function buildIncidents(input: IncidentInput): IncidentList {
  return incidentBasis(input).incidents(input.since);
}

/**
 * IncidentBasis is the part of building incidents that no window's start
 * changes (the failures and their classification, their occurrences, the
 * pods' nodes and progress, the roots), done once for windows that share an
 * input and an end: a window and its look-back.
 */
export interface IncidentBasis {
  /**
   * incidents builds the incidents of the window from `since` (Unix ms,
   * inclusive; undefined: from the first event) to the input's `until`, all of
   * them, or those of the roots `only` lists (`incidentKey`: a group left out
   * still joins the claims it explains first).
   */
  incidents(since: number | undefined, only?: ReadonlySet<string>): IncidentList;
  /**
   * reach builds what `incidents` would, for a look-back whose incidents lend
   * a window's theirs (`collectIncidents`): the evidence as the entries its
   * rows would show, unformatted, since only their times and reasons are read.
   */
  reach(since: number | undefined, only?: ReadonlySet<string>): ReachIncident[];
}

/** ReachIncident is an incident without its evidence rows, and the entries those rows would show, in time order. */
export interface ReachIncident {
  incident: Omit<Incident, 'evidence' | 'evidenceLeftOut'>;
  evidence: readonly OccurrenceEntry[];
}

/** incidentKey is an incident's cluster, namespace and root: what identifies it across windows. */
export function incidentKey(i: Pick<Incident, 'cluster' | 'namespace' | 'root'>): string {
  return `${i.cluster ?? ''}\u0000${i.namespace}\u0000${i.root}`;
}

/**
 * incidentBasis does the window-independent work of `input` (whose `since` it
 * ignores), classifying each event with `match` (default `classify`; a
 * reader that classified them already passes its answers).
 */
export function incidentBasis(input: Omit<IncidentInput, 'since'>, match: (e: CoreEvent) => FailureMatch | undefined = classify): IncidentBasis {
  const matches = new Map<CoreEvent, FailureMatch>();
  for (const e of input.events) {
    const m = match(e);
    if (m !== undefined) matches.set(e, m);
  }
  const failures = input.events.filter((e) => matches.has(e));
  // Every occurrence of the failure events, window or not: a start may reach back over a continuous run.
  const { entries } = timelineEntries({ events: failures, occurrences: input.occurrences });
  const byEvent = new Map<CoreEvent, OccurrenceEntry[]>();
  for (const x of entries) {
    const list = byEvent.get(x.event);
    if (list === undefined) byEvent.set(x.event, [x]);
    else list.push(x);
  }

  // The node each pod was scheduled to: its Scheduled event, else the kubelet that wrote about it.
  const scheduledTo = new Map<string, string>();
  for (const e of input.events) {
    const node = scheduledNode(e);
    if (node !== undefined) scheduledTo.set(podKey(eventCluster(e), namespaceOf(e), e.involvedObject.name ?? ''), node);
  }

  const progress = indexProgress(input.events, input.until);
  const seen = [...byEvent].map(([event, all]) => ({ event, all, match: matches.get(event)!, resolved: progress.resolved(event, matches.get(event)!, lastBefore(all, input.until)) }));
  // A namespace's roots do not depend on which of its failures a window holds: those of every failure read serve each window.
  const roots = findRoots(input.events, failures, input.owners ?? []);
  const until = input.until ?? input.now ?? Date.now();

  /** built are the incidents of a window, each with the window's entries its evidence is drawn from. */
  const built = (since: number | undefined, only: ReadonlySet<string> | undefined): IncidentCore[] => {
    const inWindow = (ms: number): boolean => (since === undefined || ms >= since) && (input.until === undefined || ms < input.until);
    const nodeOfPod = new Map(scheduledTo);
    const sightings: Sighting[] = [];
    for (const { event, all, match, resolved } of seen) {
      const win = all.filter((x) => inWindow(x.ms));
      if (win.length === 0) continue;
      if (event.involvedObject.kind === 'Pod' && match.facts.node !== undefined) {
        const key = podKey(eventCluster(event), namespaceOf(event), event.involvedObject.name ?? '');
        if (!nodeOfPod.has(key)) nodeOfPod.set(key, match.facts.node);
      }
      sightings.push({
        event,
        match,
        all,
        inWindow: win,
        firstMs: win[0]!.ms,
        lastMs: win[win.length - 1]!.ms,
        count: win.reduce((n, x) => n + x.count, 0),
        object: objectKey(event),
        group: '',
        resolved,
      });
    }
    const groups = groupSightings(sightings, nodeOfPod, roots);
    joinClaims(groups);
    const out: IncidentCore[] = [];
    for (const g of groups.values()) {
      if (only !== undefined && !only.has(g.key)) continue;
      const core = incidentOf(g, until, jobPods(g, input));
      if (core !== undefined) out.push(core);
    }
    return out;
  };

  return {
    incidents(since, only) {
      const incidents = built(since, only).map(({ incident, entries }) => {
        const evidence = evidenceRows(entries).map((e) => {
          const row = timelineRow(e);
          return { ...row, message: cutText(row.message) };
        });
        return { ...incident, evidence, ...(entries.length > evidence.length ? { evidenceLeftOut: entries.length - evidence.length } : {}) };
      });
      incidents.sort((a, b) => (a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : a.start.time < b.start.time ? 1 : a.start.time > b.start.time ? -1 : a.root < b.root ? -1 : a.root > b.root ? 1 : 0));
      return {
        window: {
          since: since === undefined ? null : formatTimelineTime(since),
          until: input.until === undefined ? null : formatTimelineTime(input.until),
        },
        incidents,
      };
    },
    reach(since, only) {
      return built(since, only).map(({ incident, entries }) => ({ incident, evidence: evidenceRows(entries) }));
    },
  };
}

/** IncidentCore is an incident before its evidence rows: the window's entries they are drawn from. */
interface IncidentCore {
  incident: Omit<Incident, 'evidence' | 'evidenceLeftOut'>;
  entries: readonly OccurrenceEntry[];
}

/** groupSightings groups sightings by root: a node-wide failure by its node, a Node's own events by it, anything else by its highest owner. */
function groupSightings(sightings: readonly Sighting[], nodeOfPod: ReadonlyMap<string, string>, roots: Roots): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const s of sightings) {
    const cluster = eventCluster(s.event);
    const namespace = namespaceOf(s.event);
    let root: string;
    let groupNamespace = namespace;
    const node =
      s.match.kind.subject === 'node'
        ? (s.match.facts.node ?? (s.event.involvedObject.kind === 'Pod' ? nodeOfPod.get(podKey(cluster, namespace, s.event.involvedObject.name ?? '')) : undefined))
        : undefined;
    if (node !== undefined) {
      root = `Node/${node}`;
      groupNamespace = '';
    } else if (s.event.involvedObject.kind === 'Node') {
      root = s.object;
      groupNamespace = '';
    } else {
      root = roots.rootOf(cluster, namespace, s.object);
    }
    if (s.match.kind.subject === 'node' && node !== undefined && s.match.facts.node === undefined) {
      s.match = { kind: s.match.kind, facts: { ...s.match.facts, node } };
    }
    const key = incidentKey({ cluster, namespace: groupNamespace, root });
    s.group = key;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { key, cluster, namespace: groupNamespace, root, sightings: [] }));
    g.sightings.push(s);
  }
  return groups;
}

/**
 * joinClaims brings a claim that cannot bind into the incidents of the pods
 * waiting for a claim in its namespace: the scheduler's `unbound immediate
 * PersistentVolumeClaims` names no claim, so a StatefulSet pod takes its own
 * claims (`<template>-<pod>`) and any other pod every failing claim of its
 * namespace. A claim that joins an incident is no incident of its own.
 */
function joinClaims(groups: Map<string, Group>): void {
  const claimGroups = [...groups.values()].filter((g) => g.root.startsWith('PersistentVolumeClaim/') && g.sightings.some((s) => kindOf(s) === 'volume-provisioning'));
  if (claimGroups.length === 0) return;
  const joined = new Set<string>();
  for (const g of groups.values()) {
    if (g.root.startsWith('PersistentVolumeClaim/')) continue;
    const waiting = g.sightings.filter((s) => kindOf(s) === 'unschedulable-volume' && s.match.facts.claim === undefined);
    if (waiting.length === 0) continue;
    const candidates = claimGroups.filter((c) => c.cluster === g.cluster && c.namespace === g.namespace);
    const pods = waiting.map((s) => s.event.involvedObject.name ?? '');
    const own = candidates.filter((c) => pods.some((p) => c.root.endsWith(`-${p}`)));
    for (const c of own.length > 0 ? own : candidates) {
      g.sightings.push(...c.sightings);
      joined.add(c.key);
    }
  }
  for (const key of joined) groups.delete(key);
}

/** chooseCause finds what explains a symptom within its incident: the first kind of its explainedBy with a sighting that was still happening when the symptom began. */
function chooseCause(symptom: Sighting, sightings: readonly Sighting[], depth = 0): Sighting | undefined {
  if (symptom.match.kind.role === 'cause') return symptom;
  for (const id of symptom.match.kind.explainedBy ?? []) {
    const found = sightings
      .filter((s) => s !== symptom && kindOf(s) === id && s.lastMs >= symptom.firstMs - JOIN_SLACK_MS && s.firstMs <= symptom.lastMs)
      // `other` explains a crash loop only as the kubelet's own `Failed` for that pod.
      .filter((s) => id !== 'other' || (s.event.reason === 'Failed' && s.object === symptom.object))
      .sort((a, b) => a.firstMs - b.firstMs)[0];
    if (found === undefined) continue;
    if (found.match.kind.role === 'cause' || depth > 2) return found;
    return chooseCause(found, sightings, depth + 1) ?? found;
  }
  return undefined;
}

function isWarmUp(g: Group, until: number): boolean {
  if (!g.sightings.every((s) => kindOf(s) === 'probe-readiness')) return false;
  const perPod = new Map<string, number>();
  for (const s of g.sightings) perPod.set(s.object, (perPod.get(s.object) ?? 0) + s.count);
  const last = Math.max(...g.sightings.map((s) => s.lastMs));
  return until - last > ONGOING_MS && [...perPod.values()].every((n) => n <= WARM_UP_READINESS_FAILURES);
}

/** JobPods are the pods a Job (or a CronJob's Jobs) created, as its controller's events name them, and the one created last. */
interface JobPods {
  objects: string[];
  last?: string;
}

/**
 * jobPods reads the pods of an incident rooted at a Job or CronJob from their
 * controllers' `SuccessfulCreate` events ("Created pod: NAME"): the incident
 * names them, and its steps read the last one's logs by its own name, which
 * still answers once the Job is gone (when an archive is read).
 */
function jobPods(g: Group, input: IncidentInput): JobPods {
  const slash = g.root.indexOf('/');
  const kind = g.root.slice(0, slash);
  if (kind !== 'Job' && kind !== 'CronJob') return { objects: [] };
  const events = input.events.filter((e) => eventCluster(e) === g.cluster && namespaceOf(e) === g.namespace);
  const owners = (input.owners ?? []).filter((l) => l.namespace === g.namespace);
  const scope = scopeObjects({ kind, name: g.root.slice(slash + 1), namespace: g.namespace }, events, owners).objects;
  const pods = scope.filter((o) => o.startsWith('Pod/'));
  let last: { name: string; ms: number } | undefined;
  for (const e of events) {
    if (e.reason !== 'SuccessfulCreate' || e.involvedObject.kind !== 'Job' || !scope.includes(`Job/${e.involvedObject.name ?? ''}`)) continue;
    const name = /^Created pod: (\S+)$/.exec(e.message ?? '')?.[1];
    const ms = eventLastMs(e) ?? 0;
    if (name !== undefined && (last === undefined || ms >= last.ms)) last = { name, ms };
  }
  return last === undefined ? { objects: pods } : { objects: pods, last: last.name };
}


/**
 * factsOf are the stated sighting's facts, completed by the other events of its kind about its object: a real
 * kubelet's `Killing` (the container) follows its `Unhealthy` (the probe's output), and the incident says both.
 */
function factsOf(stated: Sighting, sightings: readonly Sighting[]): Record<string, string> {
  const facts: Record<string, string> = { ...stated.match.facts };
  for (const s of sightings) {
    if (s === stated || s.object !== stated.object || kindOf(s) !== kindOf(stated)) continue;
    for (const [k, v] of Object.entries(s.match.facts)) if (facts[k] === undefined) facts[k] = v;
  }
  return facts;
}

function incidentOf(g: Group, until: number, pods: JobPods): IncidentCore | undefined {
  if (isWarmUp(g, until)) return undefined;
  const sightings = [...g.sightings].sort((a, b) => a.firstMs - b.firstMs || a.lastMs - b.lastMs || (a.object < b.object ? -1 : a.object > b.object ? 1 : 0) || eventOrder(a, b));
  // A catalogued failure outranks `other` on the same root: an unrecognised Warning is a row of the incident,
  // its cause only when nothing catalogued touches the root. A step the pod got past yields to one it did not.
  const catalogued = sightings.filter((s) => kindOf(s) !== 'other');
  const ranked = catalogued.length > 0 ? catalogued : sightings;
  const unresolved = ranked.filter((s) => !s.resolved);
  // The failure is what went wrong last; what stopped well before it began are resolved steps, not its cause.
  const primary = (unresolved.length > 0 ? unresolved : ranked).reduce((p, s) =>
    s.lastMs > p.lastMs || (s.lastMs === p.lastMs && s.match.kind.role === 'symptom' && p.match.kind.role === 'cause') ? s : p,
  );
  const cause = chooseCause(primary, sightings);
  const stated = cause ?? primary;
  // The current failure is the primary's and the cause's kinds, and the symptoms the cause explains (a pod's
  // `Error: ImagePullBackOff` seen before the registry's answer), from the first of them in the window: the
  // start is never later than the failure's earliest event. Another kind that stopped before (a Job's refusal
  // that a created ServiceAccount ended) is a resolved step, not its start.
  const kinds = new Set([kindOf(primary), kindOf(stated)]);
  for (const s of sightings) if (kindOf(stated) !== 'other' && s.match.kind.explainedBy?.includes(kindOf(stated))) kinds.add(kindOf(s));
  const current = sightings.filter((s) => kinds.has(kindOf(s)));

  const objects = [g.root];
  for (const s of sightings) if (!objects.includes(s.object)) objects.push(s.object);
  for (const p of pods.objects) if (!objects.includes(p)) objects.push(p);
  const windowEntries = sightings.flatMap((s) => s.inWindow).sort((a, b) => a.ms - b.ms);
  const lastMs = windowEntries[windowEntries.length - 1]!.ms;
  const facts = factsOf(stated, sightings);
  const templates = [...stated.match.kind.steps(facts), ...(stated === primary ? [] : primary.match.kind.steps(primary.match.facts))];
  if (pods.last !== undefined && JOB_KINDS.has(stated.match.kind.id)) {
    // By the pod's own name first: `kubectl logs job/NAME` stops answering once the Job is deleted.
    templates.unshift({
      words: ['kubectl', 'logs', { value: pods.last, role: 'pod' }, '-n', { value: g.namespace, role: 'namespace' }],
      why: 'the output of the last pod the Job created (readable while the pod exists, after the Job is gone)',
    });
  }
  const incident: Omit<Incident, 'evidence' | 'evidenceLeftOut'> = {
    kind: stated.match.kind.id,
    // Texts derived from a stranger's message are cut (cutText); the steps above were made from the whole facts.
    cause: cutText(stated.match.kind.cause(facts)),
    facts: Object.fromEntries(Object.entries(facts).map(([k, v]) => [k, cutText(v)])),
    namespace: g.namespace,
    ...(g.cluster !== '' ? { cluster: g.cluster } : {}),
    root: g.root,
    objects,
    start: startOf(current),
    lastSeen: formatTimelineTime(lastMs),
    // Ongoing while a failure the pods did not get past was seen recently.
    ongoing: sightings.some((s) => !s.resolved && until - s.lastMs <= ONGOING_MS),
    occurrences: windowEntries.reduce((n, x) => n + x.count, 0),
    hints: stepHints(templates),
  };
  return { incident, entries: windowEntries };
}

/** JOB_KINDS are the failure kinds of a Job whose next steps read its pods' logs. */
const JOB_KINDS: ReadonlySet<FailureKindId> = new Set(['job-backoff-limit']);

/** lastBefore is the last occurrence of an event before `until` (all of them when undefined). */
function lastBefore(all: readonly OccurrenceEntry[], until: number | undefined): number {
  let last = all[0]!.ms;
  for (const x of all) if ((until === undefined || x.ms < until) && x.ms > last) last = x.ms;
  return last;
}

/** eventOrder breaks ties between sightings by the event's identity, so the order of the input never decides. */
function eventOrder(a: Sighting, b: Sighting): number {
  const ka = `${a.event.metadata.namespace ?? ''}/${a.event.metadata.name ?? ''}/${a.event.reason ?? ''}`;
  const kb = `${b.event.metadata.namespace ?? ''}/${b.event.metadata.name ?? ''}/${b.event.reason ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * startOf is the first occurrence of the current failure: its first in the
 * window, reaching back before the window over a run of occurrences no
 * further apart than CONTINUITY_GAP_MS. An estimated occurrence keeps its bounds.
 */
function startOf(current: readonly Sighting[]): IncidentStart {
  const all = current.flatMap((s) => s.all).sort((a, b) => a.ms - b.ms);
  const firstInWindow = Math.min(...current.map((s) => s.firstMs));
  let i = all.findIndex((x) => x.ms === firstInWindow);
  while (i > 0 && all[i]!.ms - all[i - 1]!.ms <= CONTINUITY_GAP_MS) i--;
  const first = all[i]!;
  if (!first.estimated) return { time: formatTimelineTime(first.ms), estimated: false };
  return {
    time: formatTimelineTime(first.ms),
    estimated: true,
    earliest: first.earliestMs === undefined ? null : formatTimelineTime(first.earliestMs),
    latest: first.latestMs === undefined ? null : formatTimelineTime(first.latestMs),
  };
}

function evidenceRows(entries: readonly OccurrenceEntry[]): readonly OccurrenceEntry[] {
  if (entries.length <= MAX_EVIDENCE_ROWS) return entries;
  const half = MAX_EVIDENCE_ROWS / 2;
  return [...entries.slice(0, half), ...entries.slice(entries.length - half)];
}
