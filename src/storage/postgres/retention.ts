/**
 * Retention of a store's archive, in bounded steps: occurrences by observed
 * time, events last written before a cutoff (per cluster where a rule says so),
 * and the size cap. Expiry and compaction run in `Maintenance`.
 */
import { marksKeptFrom, retentionRules } from '../archive-store.js';
import type { RetentionPolicy, RetentionResult, RetentionRule } from '../archive-store.js';
import type { PostgresConnection } from './connection.js';
import { dropTexts } from './texts.js';

/** RETENTION_STEP bounds the objects one retention step removes. */
const RETENTION_STEP = 5_000;

/** PostgresRetention removes what a retention policy gives up, over a store's connection. */
export class PostgresRetention {
  constructor(private readonly c: PostgresConnection) {}

  /**
   * enforceRetention removes one bounded step: occurrences by observed time, and
   * events last written before the cutoff (found through the write marks and the
   * primary key of `versions`), each deleted through the write path only if it
   * is still the version retention saw. For the size cap it removes the oldest
   * share of the excess of the `bytes` counter, which a removal lowers at once.
   */
  async enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    const conn = this.c;
    const { pool } = await conn.open();
    let events = 0;
    let occurrences = 0;
    let more = false;
    const dropOccurrences = async (rule: RetentionRule | undefined, limit: number): Promise<number> => {
      const [row] = await conn.query<{ n: string; texts: number[] | null }>(pool, conn.archive.dropOccurrences(rule, limit));
      // A text outlives the occurrences that repeat it while a version or another occurrence still refers to it.
      if (row?.texts != null) await dropTexts(pool, conn.s, row.texts);
      return Number(row?.n ?? 0);
    };
    const dropEvents = async (rows: { rv: string; key: string; text_rv: string | null }[]): Promise<void> => {
      const outs = await Promise.all(rows.map((r) => conn.write({ kind: 'retire', key: r.key, expect: Number(r.rv) })));
      events += outs.filter((o) => 'rv' in o).length;
      // A retired event's text leaves the size counter now, unless an occurrence keeps it, not when its versions are purged.
      await dropTexts(pool, conn.s, rows.map((r) => r.text_rv));
    };
    const rules = retentionRules(policy);
    for (const rule of rules) {
      const dropped = await dropOccurrences(rule, RETENTION_STEP);
      occurrences += dropped;
      const [mark] = await conn.query<{ at: string; rv: string }>(pool, conn.archive.markBefore(rule.cutoffMs));
      let rows: { rv: string; key: string; text_rv: string | null }[] = [];
      if (mark !== undefined) {
        rows = await conn.query<{ rv: string; key: string; text_rv: string | null }>(pool, conn.archive.oldestEvents({ rv: Number(mark.rv), rule }, RETENTION_STEP));
        await dropEvents(rows);
      }
      more ||= dropped >= RETENTION_STEP || rows.length >= RETENTION_STEP;
    }
    const keptFrom = marksKeptFrom(policy);
    if (keptFrom !== undefined) {
      const [oldest] = await conn.query<{ at: string; rv: string }>(pool, conn.archive.markBefore(keptFrom));
      if (oldest !== undefined) await conn.query(pool, conn.archive.dropMarks(Number(oldest.at)));
    }
    if (policy.maxBytes !== undefined && policy.maxBytes > 0) {
      const [c] = await conn.query<{ occurrences: string; events: string; bytes: string }>(pool, conn.archive.counts());
      const used = Number(c?.bytes ?? 0);
      if (used > policy.maxBytes) {
        const share = (used - policy.maxBytes) / used;
        const nOcc = Math.min(Math.ceil(share * Number(c?.occurrences ?? 0)), RETENTION_STEP);
        const nEv = Math.min(Math.ceil(share * Number(c?.events ?? 0)), RETENTION_STEP);
        if (nOcc > 0) occurrences += await dropOccurrences(undefined, nOcc);
        if (nEv > 0) await dropEvents(await conn.query<{ rv: string; key: string; text_rv: string | null }>(pool, conn.archive.oldestEvents(undefined, nEv)));
        more ||= nOcc >= RETENTION_STEP || nEv >= RETENTION_STEP;
      }
    }
    return { events, occurrences, more };
  }

  /** archiveBytes is the `bytes` counter: the stored text of live events and of occurrences (the tables on disk are larger by their indexes and history). */
  async archiveBytes(): Promise<number> {
    const conn = this.c;
    const { pool } = await conn.open();
    const [row] = await conn.query<{ value: string }>(pool, conn.archive.bytes());
    return Number(row?.value ?? 0);
  }
}
