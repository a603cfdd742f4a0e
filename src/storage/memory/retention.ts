/**
 * What removes data from a memory store: TTL expiry, compaction of the history
 * window, and retention (by age, per cluster, and the size cap) in bounded
 * steps, as the persistent backends do.
 */
import { eventCluster } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { retentionRuleMatches, retentionRules } from '../archive-store.js';
import type { RetentionPolicy, RetentionResult } from '../archive-store.js';
import type { MemoryArchive } from './archive-tables.js';
import { compareKeys } from './versions.js';
import type { MemoryVersions } from './versions.js';

/** RETENTION_STEP bounds the objects one retention step removes, as the persistent backends do. */
const RETENTION_STEP = 5_000;

/** MemoryRetention expires, compacts and retires a memory store's data. */
export class MemoryRetention {
  constructor(
    private readonly v: MemoryVersions,
    private readonly archive: MemoryArchive,
  ) {}

  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    return this.v.run(() => {
      let events = 0;
      let occurrences = 0;
      for (const rule of retentionRules(policy)) {
        occurrences += this.archive.dropWhere(RETENTION_STEP, (s) => s.at.observedMicros < rule.cutoffMs * 1000 && retentionRuleMatches(rule, s.occurrence.cluster));
        let n = 0;
        for (const [key, at] of this.v.writtenAt) {
          if (n >= RETENTION_STEP) break;
          if (at < rule.cutoffMs && retentionRuleMatches(rule, this.liveCluster(key)) && this.dropEvent(key)) n++;
        }
        events += n;
      }
      if (policy.maxBytes !== undefined && policy.maxBytes > 0) {
        // Oldest first, a tenth of the excess per step, until the data fits again.
        while (this.bytes() > policy.maxBytes && events + occurrences < RETENTION_STEP) {
          const oldestOcc = this.archive.occurrences[0]?.at.observedMicros;
          const oldestEvent = this.oldestWritten();
          if (oldestOcc === undefined && oldestEvent === undefined) break;
          if (oldestEvent === undefined || (oldestOcc !== undefined && oldestOcc / 1000 <= oldestEvent[1])) occurrences += this.archive.dropOldest(1);
          else if (this.dropEvent(oldestEvent[0])) events++;
          else this.v.writtenAt.delete(oldestEvent[0]);
        }
      }
      return { events, occurrences, more: events + occurrences >= RETENTION_STEP };
    });
  }

  /** bytes is the size of the live events and the occurrences, as JSON. */
  bytes(): number {
    let n = this.archive.occurrenceBytes;
    for (const key of this.v.writtenAt.keys()) n += this.v.live(key)?.json.length ?? 0;
    return n;
  }

  private oldestWritten(): [string, number] | undefined {
    let oldest: [string, number] | undefined;
    for (const entry of this.v.writtenAt) if (oldest === undefined || entry[1] < oldest[1]) oldest = entry;
    return oldest;
  }

  /** liveCluster is the cluster a live event was archived from ("" for none). */
  private liveCluster(key: string): string {
    const live = this.v.live(key);
    return live === undefined ? '' : eventCluster(JSON.parse(live.json) as CoreEvent);
  }

  private dropEvent(key: string): boolean {
    const live = this.v.live(key);
    if (live === undefined) {
      this.v.writtenAt.delete(key);
      return false;
    }
    this.v.write(key, 'DELETED', live.json, live, undefined);
    return true;
  }

  /** expire deletes every event whose TTL has passed, in key order, each a revision watchers see as DELETED. */
  expire(): void {
    const v = this.v;
    if (v.closed) return;
    const now = v.o.clock.now();
    const due: string[] = [];
    for (const [key, expiresAt] of v.expiring) if (expiresAt <= now) due.push(key);
    for (const key of due.sort(compareKeys)) {
      const live = v.live(key);
      if (live !== undefined) v.write(key, 'DELETED', live.json, live, undefined);
    }
  }

  /** compact drops the change log older than the history window and every version no later revision can see. */
  compact(): void {
    const v = this.v;
    if (v.closed) return;
    const horizon = v.o.clock.now() - v.o.historyWindowSeconds * 1000;
    let n = 0;
    while (n < v.log.length && v.log[n]!.at <= horizon) n++;
    if (n === 0) return;
    const upTo = v.log[n - 1]!.change.rv;
    v.log.splice(0, n);
    v.compacted = Math.max(v.compacted, upTo);
    const gone: string[] = [];
    for (const [key, vs] of v.versions) {
      // A version is needed while it may be visible at a revision after the compaction point.
      let drop = 0;
      while (drop + 1 < vs.length && vs[drop + 1]!.rv <= upTo) drop++;
      if (drop > 0) vs.splice(0, drop);
      if (vs.length === 1 && vs[0]!.deleted && vs[0]!.rv <= upTo) {
        gone.push(key);
      }
    }
    for (const key of gone) {
      v.versions.delete(key);
      v.keys.delete(key);
    }
  }
}
