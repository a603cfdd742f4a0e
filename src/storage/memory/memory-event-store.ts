import { eventCluster, formatTime, nowMicroTime, occurrenceChange, occurrenceOf } from '../../api/index.js';
import type { CoreEvent, Occurrence, OccurrenceStamp } from '../../api/index.js';
import type {
  ArchiveBatch,
  ArchiveBatchResult,
  ArchiveStore,
  ClusterBinding,
  ClusterIdentity,
  ObservedRange,
  OccurrenceCursor,
  OccurrencePage,
  OccurrenceQuery,
  ReasonCount,
  ReasonCountQuery,
  RetentionPolicy,
  RetentionResult,
  SourceCheckpoint,
} from '../archive-store.js';
import { occurrenceRepeats, occurrenceTimeMs, retentionRuleMatches, retentionRules } from '../archive-store.js';
import type {
  EventWatch,
  ListOptions,
  ListResult,
  Preconditions,
  TryUpdate,
  UpdateOptions,
  UpdateResult,
  WatchOptions,
  WriteOptions,
} from '../event-store.js';
import { StorageError } from '../errors.js';
import {
  DEFAULT_MAX_COUNT_REMAINING,
  Ticker,
  WatchHub,
  checkPreconditions,
  compareCursor,
  decodeEvent,
  encodeEvent,
  eventKey,
  keyOfEvent,
  listRevision,
  matchesFilter,
  matchesOccurrence,
  microsOf,
  namespaceRange,
  resolveArchiveWrite,
  resolveCommonOptions,
  sameContent,
} from '../shared/index.js';
import type { Change, ChangeLog, ResolvedCommonOptions } from '../shared/index.js';
import type { MemoryEventStoreOptions } from './options.js';
import { requireCjs } from '../../internal/index.js';
import type BTreeModule from 'sorted-btree';

const BTree = (requireCjs('sorted-btree') as typeof BTreeModule).default;
const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface Version {
  rv: number;
  json: string;
  deleted: boolean;
  expiresAt: number | undefined;
}

interface StoredOccurrence {
  at: OccurrenceCursor;
  occurrence: Occurrence;
  bytes: number;
}

/** RETENTION_STEP bounds the objects one retention step removes, as the persistent backends do. */
const RETENTION_STEP = 5_000;

interface LogEntry {
  change: Change;
  at: number;
}

/**
 * MemoryEventStore keeps events and their history in process memory: for tests
 * and `--storage memory:`. It has the same semantics as the persistent backends
 * (revisions, snapshots, history window, TTL) and keeps nothing after exit.
 */
export class MemoryEventStore implements ArchiveStore {
  private readonly o: ResolvedCommonOptions;
  /** versions holds every kept version of each key, oldest first. */
  private readonly versions = new Map<string, Version[]>();
  /** keys is every key with a kept version, in key order (a B+ tree: inserting is O(log n), where a sorted array moves half of itself). */
  private readonly keys = new BTree<string, true>(undefined, compareKeys);
  /** expiring is when each live key with a TTL expires. */
  private readonly expiring = new Map<string, number>();
  private readonly log: LogEntry[] = [];
  /** occurrences are kept in (observed time, id) order. */
  private readonly occurrences: StoredOccurrence[] = [];
  private occurrenceSeq = 0;
  private occurrenceBytes = 0;
  private readonly checkpoints = new Map<string, SourceCheckpoint>();
  /** clusters maps each bound cluster name to its UID. */
  private readonly clusters = new Map<string, string>();
  /** writtenAt is when each live key was last written, for retention. */
  private readonly writtenAt = new Map<string, number>();
  private rv = 0;
  private compacted = 0;
  private closed = false;
  private readonly hub: WatchHub;
  private readonly tickers: Ticker[];

  constructor(options: MemoryEventStoreOptions = {}) {
    this.o = resolveCommonOptions(options);
    const changeLog: ChangeLog = {
      changesAfter: (after, limit) => this.changesAfter(after, limit),
      committedRv: () => this.rv,
      compactedRv: () => this.compacted,
    };
    this.hub = new WatchHub(changeLog, this.o.watchBufferSize);
    this.tickers = [
      new Ticker(this.o.clock, this.o.expiryIntervalMs, () => this.expire()),
      new Ticker(this.o.clock, this.o.compactIntervalMs, () => this.compact()),
    ];
  }

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    return this.run(() => {
      const key = keyOfEvent(event);
      if (this.live(key) !== undefined) throw new StorageError('KeyExists', `${key} already exists`, { key, currentResourceVersion: this.rv });
      const json = encodeEvent(event);
      const rv = this.write(key, 'ADDED', json, undefined, this.expiry(options.ttlSeconds));
      const stored = decodeEvent(json, rv);
      this.recordLocal(undefined, stored, options.occurrence);
      return stored;
    });
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.run(() => {
      const key = eventKey(namespace, name);
      const v = this.live(key);
      if (v === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      return decodeEvent(v.json, v.rv);
    });
  }

  list(options: ListOptions): Promise<ListResult> {
    return this.run(() => {
      const at = listRevision(options, this.rv, this.compacted);
      const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
      const from = options.startKey !== undefined && options.startKey > low ? options.startKey : low;
      const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
      const items: CoreEvent[] = [];
      const keys = this.keys.keys(from);
      while (items.length < limit) {
        const next = keys.next();
        if (next.done === true) break;
        const key = next.value;
        if (key === from) continue;
        if (high !== undefined && key >= high) break;
        const v = this.visible(key, at);
        if (v === undefined) continue;
        const event = decodeEvent(v.json, v.rv);
        if (matchesFilter(event, options)) items.push(event);
      }
      const result: ListResult = { items, resourceVersion: at };
      if (items.length >= limit) {
        let remaining = 0;
        // Counting stops past the cap, as in the persistent backends: beyond it the count is left out.
        for (const key of keys) {
          if (high !== undefined && key >= high) break;
          if (this.visible(key, at) === undefined) continue;
          remaining++;
          if (options.countRemaining !== true || remaining > DEFAULT_MAX_COUNT_REMAINING) break;
        }
        if (remaining > 0) {
          const last = items[items.length - 1]!;
          result.lastKey = eventKey(last.metadata.namespace!, last.metadata.name!);
          if (options.countRemaining === true && remaining <= DEFAULT_MAX_COUNT_REMAINING) result.remainingItemCount = remaining;
        }
      }
      return result;
    });
  }

  async guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const key = eventKey(namespace, name);
    for (;;) {
      this.checkOpen();
      const cur = this.live(key);
      if (cur === undefined && options.allowCreate !== true) {
        throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      }
      const current = cur === undefined ? undefined : decodeEvent(cur.json, cur.rv);
      checkPreconditions(key, current, options.preconditions, this.rv);
      const next = await tryUpdate(current);
      this.checkOpen();
      // Someone else wrote in the meantime: start again from their version, as etcd's compare-and-swap does.
      if (this.live(key)?.rv !== cur?.rv) continue;
      if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
      const json = encodeEvent(next);
      if (cur !== undefined && sameContent(json, cur.json)) return { object: decodeEvent(cur.json, cur.rv), created: false };
      const rv = this.write(key, cur === undefined ? 'ADDED' : 'MODIFIED', json, cur, this.expiry(options.ttlSeconds));
      const stored = decodeEvent(json, rv);
      this.recordLocal(current, stored, options.occurrence);
      return { object: stored, created: cur === undefined };
    }
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    return this.run(() => {
      const key = eventKey(namespace, name);
      const cur = this.live(key);
      if (cur === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      checkPreconditions(key, decodeEvent(cur.json, cur.rv), options.preconditions, this.rv);
      const rv = this.write(key, 'DELETED', cur.json, cur, undefined);
      return decodeEvent(cur.json, rv);
    });
  }

  watch(options: WatchOptions): EventWatch {
    return this.hub.watch(options);
  }

  currentResourceVersion(): Promise<number> {
    return this.run(() => this.rv);
  }

  oldestResourceVersion(): Promise<number> {
    return this.run(() => this.compacted);
  }

  ready(): Promise<void> {
    return this.run(() => undefined);
  }

  close(): Promise<void> {
    this.closed = true;
    for (const t of this.tickers) t.stop();
    this.hub.closeAll();
    return Promise.resolve();
  }

  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    return this.run(() => {
      // Decide every write against an overlay before changing anything, so a failing decide leaves the batch unwritten.
      const overlay = new Map<string, CoreEvent>();
      const planned: { key: string; object: CoreEvent; occurrence: { countBefore: number; countAfter: number } | undefined }[] = [];
      let skipped = 0;
      for (const w of batch.writes) {
        const r = resolveArchiveWrite(w, (key) => {
          const o = overlay.get(key);
          if (o !== undefined) return o;
          const v = this.live(key);
          return v === undefined ? undefined : decodeEvent(v.json, v.rv);
        });
        if (r.decision.action === 'skip') {
          skipped++;
          continue;
        }
        overlay.set(r.key, r.decision.object);
        planned.push({ key: r.key, object: r.decision.object, occurrence: r.decision.occurrence });
      }
      let events = 0;
      let occurrences = 0;
      for (const p of planned) {
        const written = this.commitArchived(p.key, p.object, p.occurrence, batch.stamp);
        if (written > 0) events++;
        if (written > 1) occurrences++;
      }
      if (batch.checkpoint !== undefined) {
        this.checkpoints.set(batch.checkpoint.source, { ...batch.checkpoint, updatedAt: formatTime(this.o.clock.now()) ?? '' });
      }
      return { events, occurrences, skipped: skipped + planned.length - events };
    });
  }

  bindCluster(identity: ClusterIdentity): Promise<ClusterBinding> {
    return this.run(() => {
      const boundUID = this.clusters.get(identity.name);
      if (boundUID === undefined) this.clusters.set(identity.name, identity.uid);
      const otherNames = [...this.clusters].filter(([name, uid]) => uid === identity.uid && name !== identity.name).map(([name]) => name);
      return { ...(boundUID !== undefined ? { boundUID } : {}), otherNames: otherNames.sort() };
    });
  }

  getCheckpoint(source: string): Promise<SourceCheckpoint | undefined> {
    return this.run(() => {
      const c = this.checkpoints.get(source);
      return c === undefined ? undefined : { ...c };
    });
  }

  listOccurrences(query: OccurrenceQuery): Promise<OccurrencePage> {
    return this.run(() => {
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
    });
  }

  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    return this.run(() => {
      let events = 0;
      let occurrences = 0;
      for (const rule of retentionRules(policy)) {
        occurrences += this.dropOccurrencesWhere(RETENTION_STEP, (s) => s.at.observedMicros < rule.cutoffMs * 1000 && retentionRuleMatches(rule, s.occurrence.cluster));
        let n = 0;
        for (const [key, at] of this.writtenAt) {
          if (n >= RETENTION_STEP) break;
          if (at < rule.cutoffMs && retentionRuleMatches(rule, this.liveCluster(key)) && this.dropEvent(key)) n++;
        }
        events += n;
      }
      if (policy.maxBytes !== undefined && policy.maxBytes > 0) {
        // Oldest first, a tenth of the excess per step, until the data fits again.
        while (this.bytes() > policy.maxBytes && events + occurrences < RETENTION_STEP) {
          const oldestOcc = this.occurrences[0]?.at.observedMicros;
          const oldestEvent = this.oldestWritten();
          if (oldestOcc === undefined && oldestEvent === undefined) break;
          if (oldestEvent === undefined || (oldestOcc !== undefined && oldestOcc / 1000 <= oldestEvent[1])) occurrences += this.dropOccurrences(1);
          else if (this.dropEvent(oldestEvent[0])) events++;
          else this.writtenAt.delete(oldestEvent[0]);
        }
      }
      return { events, occurrences, more: events + occurrences >= RETENTION_STEP };
    });
  }

  archiveBytes(): Promise<number> {
    return this.run(() => this.bytes());
  }

  observedRange(window: { sinceMs: number; untilMs: number }): Promise<ObservedRange | null> {
    return this.run(() => {
      let range: ObservedRange | null = null;
      for (const { at, occurrence } of this.occurrences) {
        const ms = occurrenceTimeMs(occurrence);
        if (ms === undefined || ms < window.sinceMs || ms >= window.untilMs) continue;
        if (range === null) range = { sinceMicros: at.observedMicros, untilMicros: at.observedMicros + 1 };
        else range.untilMicros = at.observedMicros + 1;
      }
      return range;
    });
  }

  countByReason(query: ReasonCountQuery): Promise<ReasonCount[]> {
    return this.run(() => {
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
    });
  }

  private bytes(): number {
    let n = this.occurrenceBytes;
    for (const key of this.writtenAt.keys()) n += this.live(key)?.json.length ?? 0;
    return n;
  }

  private oldestWritten(): [string, number] | undefined {
    let oldest: [string, number] | undefined;
    for (const entry of this.writtenAt) if (oldest === undefined || entry[1] < oldest[1]) oldest = entry;
    return oldest;
  }

  /** liveCluster is the cluster a live event was archived from ("" for none). */
  private liveCluster(key: string): string {
    const v = this.live(key);
    return v === undefined ? '' : eventCluster(JSON.parse(v.json) as CoreEvent);
  }

  /** dropOccurrencesWhere drops up to `limit` of the oldest occurrences that `matches` keeps. */
  private dropOccurrencesWhere(limit: number, matches: (s: StoredOccurrence) => boolean): number {
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

  private dropOccurrences(n: number): number {
    const dropped = this.occurrences.splice(0, n);
    for (const d of dropped) this.occurrenceBytes -= d.bytes;
    return dropped.length;
  }

  private dropEvent(key: string): boolean {
    const v = this.live(key);
    if (v === undefined) {
      this.writtenAt.delete(key);
      return false;
    }
    this.write(key, 'DELETED', v.json, v, undefined);
    return true;
  }

  /** commitArchived writes one archive write and its occurrence: 0 when unchanged, 1 for the event, 2 with an occurrence. */
  private commitArchived(key: string, object: CoreEvent, occurrence: { countBefore: number; countAfter: number } | undefined, stamp: OccurrenceStamp): number {
    const json = encodeEvent(object);
    const prev = this.live(key);
    if (prev !== undefined && sameContent(json, prev.json)) return 0;
    const rv = this.write(key, prev === undefined ? 'ADDED' : 'MODIFIED', json, prev, undefined);
    if (occurrence === undefined) return 1;
    this.appendOccurrence(decodeEvent(json, rv), occurrence, stamp);
    return 2;
  }

  /** recordLocal appends the occurrence of a local write when asked to and when the write is an observed change. */
  private recordLocal(prev: CoreEvent | undefined, next: CoreEvent, stamp: OccurrenceStamp | undefined): void {
    if (stamp === undefined) return;
    const change = occurrenceChange(prev, next);
    if (change !== undefined) this.appendOccurrence(next, change, stamp);
  }

  private appendOccurrence(event: CoreEvent, change: { countBefore: number; countAfter: number }, stamp: OccurrenceStamp): void {
    const id = ++this.occurrenceSeq;
    const observedTime = stamp.observedTime ?? nowMicroTime(this.o.clock);
    const occurrence = occurrenceOf(event, change, { observedTime, cluster: stamp.cluster, clusterUID: stamp.clusterUID }, id);
    const at = { observedMicros: microsOf(observedTime), id };
    const bytes = JSON.stringify(occurrence).length;
    this.occurrences.splice(this.occurrenceIndexAfter(at), 0, { at, occurrence, bytes });
    this.occurrenceBytes += bytes;
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

  private run<T>(fn: () => T): Promise<T> {
    try {
      this.checkOpen();
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new StorageError('Unreachable', 'the store is closed');
  }

  private expiry(ttlSeconds: number | undefined): number | undefined {
    return ttlSeconds !== undefined && ttlSeconds > 0 ? this.o.clock.now() + ttlSeconds * 1000 : undefined;
  }

  private live(key: string): Version | undefined {
    const last = this.versions.get(key)?.at(-1);
    return last === undefined || last.deleted ? undefined : last;
  }

  /** visible is the state of `key` as of revision `at`, if it existed then. */
  private visible(key: string, at: number): Version | undefined {
    const vs = this.versions.get(key);
    if (vs === undefined) return undefined;
    for (let i = vs.length - 1; i >= 0; i--) {
      const v = vs[i]!;
      if (v.rv <= at) return v.deleted ? undefined : v;
    }
    return undefined;
  }

  private write(key: string, type: Change['type'], json: string, prev: Version | undefined, expiresAt: number | undefined): number {
    const rv = ++this.rv;
    let vs = this.versions.get(key);
    if (vs === undefined) {
      vs = [];
      this.versions.set(key, vs);
      this.keys.set(key, true);
    }
    if (expiresAt !== undefined && type !== 'DELETED') this.expiring.set(key, expiresAt);
    else this.expiring.delete(key);
    vs.push({ rv, json, deleted: type === 'DELETED', expiresAt });
    if (type === 'DELETED') this.writtenAt.delete(key);
    else this.writtenAt.set(key, this.o.clock.now());
    const change: Change = { rv, type, key, json };
    if (prev !== undefined) {
      change.prevJson = prev.json;
      change.prevRv = prev.rv;
    }
    this.log.push({ change, at: this.o.clock.now() });
    this.hub.publish([change]);
    return rv;
  }

  private changesAfter(after: number, limit: number): Change[] {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid]!.change.rv <= after) lo = mid + 1;
      else hi = mid;
    }
    return this.log.slice(lo, lo + limit).map((e) => e.change);
  }

  private expire(): void {
    if (this.closed) return;
    const now = this.o.clock.now();
    const due: string[] = [];
    for (const [key, expiresAt] of this.expiring) if (expiresAt <= now) due.push(key);
    for (const key of due.sort(compareKeys)) {
      const v = this.live(key);
      if (v !== undefined) this.write(key, 'DELETED', v.json, v, undefined);
    }
  }

  private compact(): void {
    if (this.closed) return;
    const horizon = this.o.clock.now() - this.o.historyWindowSeconds * 1000;
    let n = 0;
    while (n < this.log.length && this.log[n]!.at <= horizon) n++;
    if (n === 0) return;
    const upTo = this.log[n - 1]!.change.rv;
    this.log.splice(0, n);
    this.compacted = Math.max(this.compacted, upTo);
    const gone: string[] = [];
    for (const [key, vs] of this.versions) {
      // A version is needed while it may be visible at a revision after the compaction point.
      let drop = 0;
      while (drop + 1 < vs.length && vs[drop + 1]!.rv <= upTo) drop++;
      if (drop > 0) vs.splice(0, drop);
      if (vs.length === 1 && vs[0]!.deleted && vs[0]!.rv <= upTo) {
        gone.push(key);
      }
    }
    for (const key of gone) {
      this.versions.delete(key);
      this.keys.delete(key);
    }
  }
}
