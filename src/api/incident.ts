import type { TimelineRow } from './timeline.js';

/**
 * The incidents' output: a stable shape printed as is by `kevents incidents -o json`
 * and served by `kevents serve`
 * (GET /apis/archive.kevents.io/v1alpha1/[namespaces/NS/]incidents). Fields are
 * only ever added.
 */

/** IncidentStart is when an incident began: a time the events give, or an estimate between two bounds. */
export interface IncidentStart {
  time: string;
  /** estimated: the first occurrence has no time of its own; it lies between `earliest` and `latest` (null: no bound). */
  estimated: boolean;
  earliest?: string | null;
  latest?: string | null;
}

/** IncidentHint is one next step: a command whose every value was validated and quoted, and why to run it. */
export interface IncidentHint {
  command: string;
  why: string;
}

/** Incident is what went wrong with one root object, its cause and the events that show it. */
export interface Incident {
  /** kind is the failure kind's id in the catalogue (`create-forbidden-quota`, …, `other`). */
  kind: string;
  /** cause is one sentence, on one line, built from the facts the events give. */
  cause: string;
  /** facts are the values the kind read from its events (quota, storageClass, image, node, …). */
  facts: Record<string, string>;
  /** namespace is the root's namespace, "" for a Node. */
  namespace: string;
  cluster?: string;
  /** root is `Kind/name` of the highest owner the events or names reach. */
  root: string;
  /** objects are `Kind/name` of every object whose events are in the incident, root first. */
  objects: string[];
  start: IncidentStart;
  /** lastSeen is the last occurrence of any of its failure events in the window. */
  lastSeen: string;
  /** ongoing: its failure events were still being reported near the window's end. */
  ongoing: boolean;
  /** occurrences counts the occurrences of its failure events in the window. */
  occurrences: number;
  hints: IncidentHint[];
  /** evidence are the timeline rows of its failure events in the window (the first and last MAX_EVIDENCE_ROWS/2). */
  evidence: TimelineRow[];
  /**
   * evidenceLeftOut counts the rows of its failure events in the window that `evidence` does not carry: the middle
   * of a long run, or all of them where an answer's byte bound left them out. Its timeline has every row.
   */
  evidenceLeftOut?: number;
}

/** IncidentList is the whole result: the window asked for and the incidents, most recent first. */
export interface IncidentList {
  window: { since: string | null; until: string | null };
  incidents: Incident[];
  /** incidentsLeftOut counts the oldest incidents an answer's byte bound left out (`--max-answer-bytes`); absent when none were. */
  incidentsLeftOut?: number;
}
