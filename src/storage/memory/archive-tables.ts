/**
 * A memory store's archive, beside its versions as the persistent backends
 * keep theirs in tables of their own: occurrences in (observed time, id) order,
 * source checkpoints and cluster bindings.
 */
import { formatTime, nowMicroTime, occurrenceOf } from '../../api/index.js';
import type { CoreEvent, Occurrence, OccurrenceStamp } from '../../api/index.js';
import type {
  ClusterBinding,
  ClusterIdentity,
  EventOccurrencesQuery,
  ObservedRange,
  OccurrenceCursor,
  OccurrencePage,
  OccurrenceQuery,
  ReasonCount,
  ReasonCountQuery,
  SourceCheckpoint,
} from '../archive-store.js';
import { eventOccurrenceQuery, occurrenceRepeats, occurrenceTimeMs } from '../archive-store.js';
import { compareCursor, eventKey, matchesOccurrence, microsOf } from '../shared/index.js';
import type { ResolvedCommonOptions } from '../shared/index.js';

/** StoredOccurrence is one kept occurrence, with its position and its size for the size cap. */
export interface StoredOccurrence {
  at: OccurrenceCursor;
  occurrence: Occurrence;
  bytes: number;
}

/** MemoryArchive keeps a memory store's occurrences, checkpoints and cluster bindings. */
export class MemoryArchive {
  /** occurrences are kept in (observed time, id) order. */
  readonly occurrences: StoredOccurrence[] = [];
  private occurrenceSeq = 0;
  /** occurrenceBytes is the size of the kept occurrences, as JSON. */
  occurrenceBytes = 0;
  private readonly checkpoints = new Map<string, SourceCheckpoint>();
  /** clusters maps each bound cluster name to its UID. */
  private readonly clusters = new Map<string, string>();

  constructor(private readonly o: ResolvedCommonOptions) {}

  bindCluster(identity: ClusterIdentity): ClusterBinding {
    const boundUID = this.clusters.get(identity.name);
    if (boundUID === undefined) this.clusters.set(identity.name, identity.uid);
    const otherNames = [...this.clusters].filter(([name, uid]) => uid === identity.uid && name !== identity.name).map(([name]) => name);
    return { ...(boundUID !== undefined ? { boundUID } : {}), otherNames: otherNames.sort() };
  }

  getCheckpoint(source: string): SourceCheckpoint | undefined {
    const c = this.checkpoints.get(source);
    return c === undefined ? undefined : { ...c };
  }

  /** setCheckpoint records how far a source has been archived, stamped now. */
  setCheckpoint(checkpoint: SourceCheckpoint): void {
    this.checkpoints.set(checkpoint.source, { ...checkpoint, updatedAt: formatTime(this.o.clock.now()) ?? '' });
  }

  listOccurrences(query: OccurrenceQuery): OccurrencePage {
    const limit = query.limit !== undefined && query.limit > 0 ? query.limit : Infinity;
    const from = query.after ?? (query.sinceMicros !== undefined ? { observedMicros: query.sinceMicros, id: 0 } : undefined);
    let i = from === undefined ? 0 : this.occurrenceIndexAfter(from);
    const items: Occurrence[] = [];
    let last: OccurrenceCursor | undefined;
    for (; i < this.occurrences.length; i++) {
      const s = this.occurrences[i]!;
      if (query.untilMicros !== undefined && s.at.observedMicros >= query.untilMicros) break;
      if (!matchesOccurrence(s.occurrence, s.at, query)) continue;
      if (items.length >= limit) return { items, next: last! };
      items.push(structuredClone(s.occurrence));
      last = s.at;
    }
    return { items };
  }

  /** listEventOccurrences answers each event's query (`eventOccurrenceQuery`) in one walk of the occurrences. */
  listEventOccurrences(query: EventOccurrencesQuery): Occurrence[][] {
    const limit = query.limit !== undefined && query.limit > 0 ? query.limit : Infinity;
    const out: Occurrence[][] = query.events.map(() => []);
    const byEvent = new Map<string, { index: number; q: OccurrenceQuery }[]>();
    query.events.forEach((e, index) => {
      const key = eventKey(e.namespace, e.name);
      byEvent.set(key, [...(byEvent.get(key) ?? []), { index, q: eventOccurrenceQuery(e, query) }]);
    });
    for (const s of this.occurrences) {
      const wanted = byEvent.get(eventKey(s.occurrence.metadata.namespace ?? '', s.occurrence.event.name));
      for (const { index, q } of wanted ?? []) {
        if (out[index]!.length < limit && matchesOccurrence(s.occurrence, s.at, q)) out[index]!.push(structuredClone(s.occurrence));
      }
    }
    return out;
  }

  observedRange(window: { sinceMs: number; untilMs: number }): ObservedRange | null {
    let range: ObservedRange | null = null;
    for (const { at, occurrence } of this.occurrences) {
      const ms = occurrenceTimeMs(occurrence);
      if (ms === undefined || ms < window.sinceMs || ms >= window.untilMs) continue;
      if (range === null) range = { sinceMicros: at.observedMicros, untilMicros: at.observedMicros + 1 };
      else range.untilMicros = at.observedMicros + 1;
    }
    return range;
  }

  countByReason(query: ReasonCountQuery): ReasonCount[] {
    const counts = new Map<string, ReasonCount>();
    for (const { occurrence: o } of this.occurrences) {
      if (query.namespace !== undefined && o.event.namespace !== query.namespace) continue;
      const ms = occurrenceTimeMs(o);
      if (ms === undefined || ms < query.sinceMs || ms >= query.untilMs) continue;
      const type = o.type ?? '';
      const reason = o.reason ?? '';
      const key = `${type}\u0000${reason}`;
      const c = counts.get(key);
      if (c === undefined) counts.set(key, { type, reason, count: occurrenceRepeats(o), firstMs: ms });
      else {
        c.count += occurrenceRepeats(o);
        c.firstMs = Math.min(c.firstMs, ms);
      }
    }
    return [...counts.values()];
  }

  /** append keeps the occurrence of a change of `event`, in observed-time order. */
  append(event: CoreEvent, change: { countBefore: number; countAfter: number }, stamp: OccurrenceStamp): void {
    const id = ++this.occurrenceSeq;
    const observedTime = stamp.observedTime ?? nowMicroTime(this.o.clock);
    const occurrence = occurrenceOf(event, change, { observedTime, cluster: stamp.cluster, clusterUID: stamp.clusterUID }, id);
    const at = { observedMicros: microsOf(observedTime), id };
    const bytes = JSON.stringify(occurrence).length;
    this.occurrences.splice(this.occurrenceIndexAfter(at), 0, { at, occurrence, bytes });
    this.occurrenceBytes += bytes;
  }

  /** dropWhere drops up to `limit` of the oldest occurrences that `matches` keeps. */
  dropWhere(limit: number, matches: (s: StoredOccurrence) => boolean): number {
    const kept: StoredOccurrence[] = [];
    let dropped = 0;
    for (const s of this.occurrences) {
      if (dropped < limit && matches(s)) {
        dropped++;
        this.occurrenceBytes -= s.bytes;
      } else kept.push(s);
    }
    this.occurrences.length = 0;
    for (const s of kept) this.occurrences.push(s);
    return dropped;
  }

  /** dropOldest drops the `n` oldest occurrences. */
  dropOldest(n: number): number {
    const dropped = this.occurrences.splice(0, n);
    for (const d of dropped) this.occurrenceBytes -= d.bytes;
    return dropped.length;
  }

  /** occurrenceIndexAfter is the index of the first occurrence positioned after `at`. */
  private occurrenceIndexAfter(at: OccurrenceCursor): number {
    let lo = 0;
    let hi = this.occurrences.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareCursor(this.occurrences[mid]!.at, at) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
