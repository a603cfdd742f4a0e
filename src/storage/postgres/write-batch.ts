import { eventCluster } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import type { ArchiveBatchResult, ArchiveWrite, SourceCheckpoint } from '../archive-store.js';
import type { Preconditions } from '../event-store.js';
import { StorageError, isStorageError } from '../errors.js';
import { checkPreconditions, decodeEvent, encodeEvent, eventKey, fieldValue, planArchiveWrites, sameContent } from '../shared/index.js';
import type { Change } from '../shared/index.js';
import { occurrenceRow } from './archive-tables.js';
import type { LagBounds, ObservedStamp, OccurrenceRow } from './archive-tables.js';
import type { PgClient } from './options.js';
import { CURRENT, Op } from './schema.js';
import { searchColumns } from './search-index-writer.js';
import type { SearchColumns } from './search-index-writer.js';
import { objectColumns, objectOf, packText, storedOf } from './packed-rows.js';
import type { PackedObject } from './packed-rows.js';
import { cutText, splitText, textOf } from './texts.js';

/** Fields are the filter columns of a version row. */
export interface Fields {
  name: string;
  involved_kind: string;
  involved_namespace: string;
  involved_name: string;
  involved_uid: string;
  reason: string;
  type: string;
  /** cluster is the cluster an archived event came from (its `archive.kevents.io/cluster` label), "" for none: per-cluster retention selects by it. */
  cluster: string;
}

const FIELD_NAMES = ['name', 'involved_kind', 'involved_namespace', 'involved_name', 'involved_uid', 'reason', 'type', 'cluster'] as const;

/** fieldsOf reads the filter columns of an event. */
export function fieldsOf(e: CoreEvent): Fields {
  return {
    name: e.metadata.name ?? '',
    involved_kind: fieldValue(e, 'involvedObject.kind'),
    involved_namespace: fieldValue(e, 'involvedObject.namespace'),
    involved_name: fieldValue(e, 'involvedObject.name'),
    involved_uid: fieldValue(e, 'involvedObject.uid'),
    reason: fieldValue(e, 'reason'),
    type: fieldValue(e, 'type'),
    cluster: eventCluster(e),
  };
}

/**
 * WriteOp is one write of a batch, decided against the key's current row inside
 * the batch's transaction: `put` is a compare-and-swap on the current row's
 * revision (0 for a missing key), `expire` deletes only the version the sweep
 * saw, and only if it is still expired, `retire` (retention) only the version
 * it saw. A create or put may carry the occurrence it records. `archive` is a
 * whole archive batch: its writes are decided against the current rows (and
 * each other), and all of it is written, with its checkpoint, or none. `message`
 * is the event's message, which a long one stores once (`texts.ts`).
 */
export type WriteOp =
  | { kind: 'create'; key: string; json: string; message: string | undefined; fields: Fields; search: SearchColumns; expiresAt: number | null; occurrence?: OccurrenceRow | undefined }
  | { kind: 'put'; key: string; expect: number; json: string; message: string | undefined; fields: Fields; search: SearchColumns; expiresAt: number | null; occurrence?: OccurrenceRow | undefined }
  | { kind: 'delete'; key: string; preconditions: Preconditions | undefined }
  | { kind: 'expire'; key: string; expect: number; now: number }
  | { kind: 'retire'; key: string; expect: number }
  | { kind: 'archive'; writes: ArchiveWrite[]; stamp: ObservedStamp; checkpoint: SourceCheckpoint | undefined };

/**
 * Outcome is what became of one WriteOp: written at `rv` (with the stored text;
 * a delete's is the last state), lost a compare-and-swap, failed, had nothing to
 * do, or (an archive batch) what it wrote.
 */
export type Outcome = { rv: number; json: string } | { conflict: true } | { error: StorageError } | { skipped: true } | { archived: ArchiveBatchResult };

/** BatchResult is a committed batch: revisions base+1..last, and the changes to publish. */
export interface BatchResult {
  base: number;
  last: number;
  changes: Change[];
  outcomes: Outcome[];
}

/** Durability says when a batch is acknowledged: `sync` once its WAL is on disk, `async` once it is committed in the server's memory. */
export type Durability = 'sync' | 'async';

/** Row is a version row planned with revisions relative to the batch's base (1..n). */
interface Row extends Fields {
  off: number;
  key: string;
  op: 1 | 2 | 3;
  object: string;
  /** stored is the `object` column: `object` without a message kept in `texts` (`texts.ts`). */
  stored: string;
  /** textAbs and textOff name the `texts` row of the message: a stored one (by revision) or one this batch adds (by offset). */
  textAbs: number | null;
  textOff: number | null;
  /** newText is the message's JSON string when this row adds it to `texts`. */
  newText: string | null;
  expires_at: number | null;
  /** prev is the row this one replaces: a stored row (by revision) or one of this batch (by offset). */
  prevAbs: number | null;
  prevOff: number | null;
  supersededOff: number | null;
  /** prevObject is the stored text of the replaced row (not a column: the watch change carries it). */
  prevObject: string | null;
  occurrence: OccurrenceRow | undefined;
  /** search and last_ms are the row's search columns (`search.ts`); a tombstone has none. */
  search: string | null;
  last_ms: number | null;
}

/** Current is a key's current row as the batch sees it. */
interface Current extends Fields {
  rv: number | null;
  off: number | null;
  /** object is the whole text, `stored` the `object` column, textAbs and textOff the row of its text (see Row). */
  object: string;
  stored: string;
  textAbs: number | null;
  textOff: number | null;
  expires_at: number | null;
  /** event is the decoded object, for archive decisions (kept for rows of this batch). */
  event?: CoreEvent;
}

interface StoredRow extends Fields, PackedObject {
  rv: string;
  key: string;
  /** stored is the `object` column of a row that refers to a text (null for the others, and for packed rows, whose `object_z` it is). */
  stored: string | null;
  text_rv: string | null;
  expires_at: string | null;
}

const TYPES = { [Op.ADDED]: 'ADDED', [Op.MODIFIED]: 'MODIFIED', [Op.DELETED]: 'DELETED' } as const;

/**
 * SEPARATOR joins a batch's stored objects into one text parameter, which the
 * server splits: an array literal would escape every quote of every object on
 * the way out and unescape it again on the way in. Stored objects are JSON,
 * which never holds a raw control character.
 */
const SEPARATOR = '\x1e';

/** OCC_ARGS are the columns of a batch's occurrences: the offset of the row each records (its id is that row's revision), then its columns. */
const OCC_ARGS = [
  ['occ_offs', 'int[]'],
  ['occ_text_abs', 'bigint[]'],
  ['occ_text_off', 'int[]'],
  ['occ_observed', 'bigint[]'],
  ['occ_ns', 'text[]'],
  ['occ_event', 'text[]'],
  ['occ_regarding', 'text[]'],
  ['occ_bodies', 'text[]'],
  ['occ_types', 'text[]'],
  ['occ_reasons', 'text[]'],
  ['occ_repeats', 'int[]'],
  ['occ_seen', 'bigint[]'],
  ['occ_sizes', 'int[]'],
  ['occ_clusters', 'text[]'],
] as const;

/** JOINED are the text parameters sent as one string joined by SEPARATOR (see there). */
const JOINED = new Set(['objects', 'occ_bodies', 'new_texts']);

/** ARGS are the write function's parameters, in order, with their SQL types. */
const ARGS = [
  ['check_keys', 'text[]'],
  ['check_rvs', 'bigint[]'],
  ['offs', 'int[]'],
  ['keys', 'text[]'],
  ['ops', 'smallint[]'],
  ['objects', 'text[]'],
  ['expires', 'bigint[]'],
  ['prev_abs', 'bigint[]'],
  ['prev_off', 'int[]'],
  ['sup_off', 'int[]'],
  ...FIELD_NAMES.map((f) => [`f_${f}`, 'text[]'] as const),
  ['f_search', 'text[]'],
  ['f_last_ms', 'bigint[]'],
  ['text_abs', 'bigint[]'],
  ['text_off', 'int[]'],
  ['new_text_offs', 'int[]'],
  ['new_texts', 'text[]'],
  ['old_rvs', 'bigint[]'],
  ['old_sup_off', 'int[]'],
  ['n', 'int'],
  ['channel', 'text'],
  ['origin', 'text'],
  ['notify', 'boolean'],
  ...OCC_ARGS,
  ['lag_hours', 'bigint[]'],
  ['lag_min', 'bigint[]'],
  ['lag_max', 'bigint[]'],
  ['cp_sources', 'text[]'],
  ['cp_rvs', 'text[]'],
  ['cp_at', 'bigint'],
  ['mark_at', 'bigint'],
  ['bytes_delta', 'bigint'],
] as const;

/**
 * writeFunctionSql defines `<s>.write_batch`, which commits a planned batch in
 * one round trip. It first locks the revision counter row: writers of every
 * replica take turns there, so revisions are handed out without gaps and commit
 * order is revision order (a transaction that sees revision N committed sees
 * every revision below it). Under the lock it checks that each key's current row
 * is still the one the plan was made against (every statement of a function
 * reads a fresh snapshot), and answers -1 if not, so the plan is made again.
 */
export function writeFunctionSql(s: string): string {
  const cols = ['rv', 'key', 'op', 'object_z', 'expires_at', 'prev_rv', 'superseded_rv', ...FIELD_NAMES, 'search', 'last_ms', 'text_rv'];
  const unnested = ['offs', 'keys', 'ops', 'objects', 'expires', 'prev_abs', 'prev_off', 'sup_off', ...FIELD_NAMES.map((f) => `f_${f}`), 'f_search', 'f_last_ms', 'text_abs', 'text_off'];
  // The row alias names differ from the parameter names, which PL/pgSQL would find ambiguous.
  const alias = unnested.map((_, i) => `c${i}`);
  const n = FIELD_NAMES.length;
  const vals = ['base + u.c0', 'u.c1', 'u.c2', "decode(u.c3, 'base64')", 'u.c4', 'coalesce(u.c5, base + u.c6)', 'base + u.c7', ...FIELD_NAMES.map((_, i) => `u.c${8 + i}`), `u.c${8 + n}::tsvector`, `u.c${9 + n}`, `coalesce(u.c${10 + n}, base + u.c${11 + n})`];
  const occCols = ['id', 'text_rv', 'observed_us', 'namespace', 'event_name', 'regarding_name', 'body_z', 'type', 'reason', 'repeats', 'seen_ms', 'size', 'cluster'];
  const occAlias = OCC_ARGS.map((_, i) => `o${i}`);
  // Objects and bodies arrive packed in base64 (`packText`).
  const occVals = ['base + u.o0', 'coalesce(u.o1, base + u.o2)', ...occAlias.slice(3).map((a, i) => (OCC_ARGS[i + 3]![0] === 'occ_bodies' ? `decode(u.${a}, 'base64')` : `u.${a}`))];
  return `
CREATE OR REPLACE FUNCTION ${s}.write_batch(${ARGS.map(([n, t]) => `${n} ${t}`).join(', ')}) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE base bigint;
BEGIN
  -- The commit does not wait for the disk while the revision lock is held; write_batch_durably flushes after it.
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT value INTO base FROM ${s}.meta WHERE name = 'revision' FOR UPDATE;
  -- Correlated lookups and = ANY keep every statement on its index whatever the table's statistics say.
  IF EXISTS (SELECT 1 FROM unnest(check_keys, check_rvs) AS c(k, r)
             WHERE coalesce((SELECT v.rv FROM ${s}.versions v WHERE v.key = c.k AND v.superseded_rv IS NULL AND v.op <> 3), 0) <> c.r) THEN
    RETURN -1;
  END IF;
  -- Replaced rows leave the current-key index before their successors enter it.
  IF n > 0 THEN
    UPDATE ${s}.versions v SET superseded_rv = base + o.off FROM unnest(old_rvs, old_sup_off) AS o(rv, off) WHERE v.rv = ANY(old_rvs) AND v.rv = o.rv;
    IF cardinality(new_text_offs) > 0 THEN
      INSERT INTO ${s}.texts (rv, json) SELECT base + u.a, u.b FROM unnest(new_text_offs, new_texts) AS u(a, b);
    END IF;
    INSERT INTO ${s}.versions (${cols.join(', ')})
      SELECT ${vals.join(', ')} FROM unnest(${unnested.join(', ')}) AS u(${alias.join(', ')});
    UPDATE ${s}.meta SET value = base + n WHERE name = 'revision';
    IF notify THEN PERFORM pg_notify(channel, origin || ' ' || (base + n)); END IF;
  END IF;
  IF cardinality(occ_offs) > 0 THEN
    INSERT INTO ${s}.occurrences (${occCols.join(', ')})
      SELECT ${occVals.join(', ')} FROM unnest(${OCC_ARGS.map(([a]) => a).join(', ')}) AS u(${occAlias.join(', ')});
  END IF;
  IF cardinality(lag_hours) > 0 THEN
    INSERT INTO ${s}.occurrence_lag (hour, min_us, max_us) SELECT * FROM unnest(lag_hours, lag_min, lag_max)
      ON CONFLICT (hour) DO UPDATE SET min_us = least(${s}.occurrence_lag.min_us, excluded.min_us), max_us = greatest(${s}.occurrence_lag.max_us, excluded.max_us);
  END IF;
  IF cardinality(cp_sources) > 0 THEN
    INSERT INTO ${s}.source_checkpoints (source, resource_version, updated_at) SELECT u.a, u.b, cp_at FROM unnest(cp_sources, cp_rvs) AS u(a, b)
      ON CONFLICT (source) DO UPDATE SET resource_version = excluded.resource_version, updated_at = excluded.updated_at;
  END IF;
  IF mark_at IS NOT NULL AND n > 0 THEN
    INSERT INTO ${s}.write_marks (at, rv) VALUES (mark_at, base + n) ON CONFLICT (at) DO UPDATE SET rv = greatest(${s}.write_marks.rv, excluded.rv);
  END IF;
  IF bytes_delta <> 0 THEN
    UPDATE ${s}.meta SET value = value + bytes_delta WHERE name = 'bytes';
  END IF;
  RETURN base;
END
$fn$;
-- write_batch_durably takes the parameters as they travel (see wireType); CALL takes no subqueries in its arguments.
-- A transactional logical message is the smallest write that makes a commit wait for the WAL flush (no table, any wal_level).
CREATE OR REPLACE PROCEDURE ${s}.write_batch_durably(${ARGS.map(([n, t]) => `${n} ${wireType(n, t)}`).join(', ')}, INOUT base bigint DEFAULT NULL) LANGUAGE plpgsql AS $fn$
BEGIN
  base := ${s}.write_batch(${ARGS.map(([n, t]) => fromWire(n, n, t)).join(', ')});
  COMMIT;
  IF base >= 0 THEN
    PERFORM pg_logical_emit_message(true, 'kevents', '');
    IF n > 0 THEN PERFORM pg_notify(channel, origin || ' ' || (base + n)); END IF;
  END IF;
END
$fn$;`;
}

/** BatchContext is what a batch needs from its store besides the writes: the lag bounds copy, and the time to mark (null when no mark is due). */
export interface BatchContext {
  lags: LagBounds;
  now: number;
  markAt: number | null;
}

/**
 * WriteBatch commits a group of writes as one transaction. It reads the current
 * rows of the batch's keys (a batch of creates assumes none exist, which the
 * write function checks), plans every write against them in order, and calls
 * the write function; a concurrent writer that changed one of the keys makes it
 * read and plan again. An archive write that redirects to a key not read yet
 * makes it read that key too and plan again.
 *
 * The write function commits without waiting for its WAL to reach the disk, so
 * the revision lock, which every writer of every replica queues on, is held for
 * the work of the batch only, not for a disk flush. With `sync` durability the
 * batch is called through the procedure `write_batch_durably`, which commits
 * it, then commits a transaction of one record synchronously: that flush covers
 * every earlier WAL record, the batch's commit among them, so the batch is on
 * disk when the call returns, and it overlaps with the next batch's work under
 * the lock. Other replicas are notified by that second transaction, once the
 * batch is durable. (A reader that happens to read in between can see a batch
 * up to one flush before it is durable; nothing is acknowledged before.)
 */
export class WriteBatch {
  private readonly call: string;
  private readonly callDurably: string;

  constructor(
    private readonly s: string,
    private readonly channel: string,
    /** origin names this replica in its notifications, so its listener can skip its own commits (they are delivered directly). */
    private readonly origin: string,
    private readonly durability: Durability,
  ) {
    const args = ARGS.map(([name, t], i) => fromWire(name, `$${i + 1}`, t));
    this.call = `SELECT ${s}.write_batch(${args.join(', ')}) AS base`;
    this.callDurably = `CALL ${s}.write_batch_durably(${ARGS.map(([name, t], i) => `$${i + 1}::${wireType(name, t)}`).join(', ')}, NULL)`;
  }

  async run(client: Pick<PgClient, 'query'>, ops: readonly WriteOp[], ctx: BatchContext): Promise<BatchResult> {
    let assumeAbsent = ops.every((o) => o.kind === 'create');
    const keys = new Set<string>();
    for (const op of ops) {
      if (op.kind !== 'archive') keys.add(op.key);
      else for (const w of op.writes) keys.add(eventKey(w.namespace, w.name));
    }
    for (;;) {
      const current = new Map<string, Current | undefined>();
      if (!assumeAbsent) {
        const stored = await client.query<StoredRow>({
          name: `${this.s}_current_rows`,
          text: `SELECT rv, key, CASE WHEN text_rv IS NULL THEN NULL ELSE v.object END AS stored, text_rv, ${objectColumns(this.s, 'v')}, expires_at, ${FIELD_NAMES.join(', ')} FROM ${this.s}.versions v WHERE key = ANY(ARRAY(SELECT json_array_elements_text($1::json))) AND ${CURRENT}`,
          values: [JSON.stringify([...keys])],
        });
        for (const k of keys) current.set(k, undefined);
        for (const r of stored.rows) {
          const textAbs = r.text_rv === null ? null : Number(r.text_rv);
          const object = objectOf(r)!;
          const stored = r.text_rv === null ? object : storedOf({ object: r.stored, object_z: r.object_z })!;
          current.set(r.key, { ...pickFields(r), rv: Number(r.rv), off: null, object, stored, textAbs, textOff: null, expires_at: r.expires_at === null ? null : Number(r.expires_at) });
        }
      }
      const checked = [...keys];
      const checks = checked.map((k) => current.get(k)?.rv ?? 0);
      const plan = new Plan(current, ctx.lags);
      const outcomes = ops.map((op) => plan.apply(op));
      if (plan.missing.size > 0) {
        for (const k of plan.missing) keys.add(k);
        continue;
      }
      if (plan.rows.length === 0 && plan.checkpoints.size === 0) return { base: 0, last: 0, changes: [], outcomes };
      const sync = this.durability === 'sync';
      const { rows } = await client.query<{ base: string }>({
        name: `${this.s}_write_batch${sync ? '_durably' : ''}`,
        text: sync ? this.callDurably : this.call,
        values: jsonArrays(plan.params(checked, checks, this.channel, this.origin, !sync, ctx)),
      });
      const base = Number(rows[0]?.base ?? -1);
      if (base < 0) {
        assumeAbsent = false;
        continue;
      }
      ctx.lags.committed(plan.lags);
      const result = plan.resolve(base, outcomes);
      return result;
    }
  }
}

/** Plan applies a batch's writes, in order, to the current rows of its keys, and collects the rows to store. */
class Plan {
  readonly rows: Row[] = [];
  /** missing are keys an archive write asked about that the batch did not read. */
  readonly missing = new Set<string>();
  readonly checkpoints = new Map<string, string>();
  /** lags are the widenings of the lag bounds this batch's occurrences need. */
  readonly lags = new Map<number, { min: number; max: number }>();
  private readonly supersede: [number, number][] = [];
  private last = 0;
  private bytes = 0;

  constructor(
    private readonly current: Map<string, Current | undefined>,
    private readonly lagBounds: LagBounds,
  ) {}

  apply(op: WriteOp): Outcome {
    if (op.kind === 'archive') return this.archive(op);
    const cur = this.current.get(op.key);
    try {
      switch (op.kind) {
        case 'create':
          if (cur !== undefined) throw new StorageError('KeyExists', `${op.key} already exists`, { key: op.key });
          return this.write(op.key, Op.ADDED, op.json, op.message, op.fields, op.search, op.expiresAt, undefined, op.occurrence);
        case 'put':
          // A key written earlier in this batch has no revision yet, so a compare-and-swap against it always loses.
          if (cur === undefined ? op.expect !== 0 : cur.rv !== op.expect) return { conflict: true };
          return this.write(op.key, cur === undefined ? Op.ADDED : Op.MODIFIED, op.json, op.message, op.fields, op.search, op.expiresAt, cur, op.occurrence);
        case 'delete':
          if (cur === undefined) throw new StorageError('KeyNotFound', `${op.key} not found`, { key: op.key });
          if (op.preconditions !== undefined) {
            // A version written earlier in this batch is checked against the revision it will get: none yet, so a resourceVersion precondition fails.
            checkPreconditions(op.key, decodeEvent(cur.object, cur.rv ?? 0), op.preconditions, 0);
          }
          return this.write(op.key, Op.DELETED, cur.object, undefined, cur, null, null, cur, undefined);
        case 'expire':
          // The event may have been renewed or deleted since the sweep read it.
          if (cur === undefined || cur.rv !== op.expect || cur.expires_at === null || cur.expires_at > op.now) return { skipped: true };
          return this.write(op.key, Op.DELETED, cur.object, undefined, cur, null, null, cur, undefined);
        case 'retire':
          if (cur === undefined || cur.rv !== op.expect) return { skipped: true };
          return this.write(op.key, Op.DELETED, cur.object, undefined, cur, null, null, cur, undefined);
      }
    } catch (e) {
      if (isStorageError(e)) return { error: e };
      throw e;
    }
  }

  /** archive decides every write of an archive batch before planning any, so a decision that throws leaves nothing of the batch. */
  private archive(op: Extract<WriteOp, { kind: 'archive' }>): Outcome {
    let missing = false;
    let decided;
    try {
      decided = planArchiveWrites(op.writes, (key) => {
        if (!this.current.has(key)) {
          this.missing.add(key);
          missing = true;
          return undefined;
        }
        const cur = this.current.get(key);
        if (cur === undefined) return undefined;
        cur.event ??= decodeEvent(cur.object, cur.rv ?? 0);
        return cur.event;
      });
    } catch (e) {
      if (missing) return { skipped: true };
      if (isStorageError(e)) return { error: e };
      throw e;
    }
    // The batch is planned again once the keys it lacks are read.
    if (missing) return { skipped: true };
    const { planned, skipped } = decided;
    let events = 0;
    let occurrences = 0;
    for (const p of planned) {
      const json = encodeEvent(p.object);
      const cur = this.current.get(p.key);
      if (cur !== undefined && sameContent(json, cur.object)) continue;
      const occurrence = p.occurrence === undefined ? undefined : occurrenceRow(p.object, p.occurrence, op.stamp);
      this.write(p.key, cur === undefined ? Op.ADDED : Op.MODIFIED, json, p.object.message, fieldsOf(p.object), searchColumns(p.object), null, cur, occurrence);
      this.current.get(p.key)!.event = p.object;
      events++;
      if (occurrence !== undefined) occurrences++;
    }
    if (op.checkpoint !== undefined) this.checkpoints.set(op.checkpoint.source, op.checkpoint.resourceVersion);
    return { archived: { events, occurrences, skipped: skipped + planned.length - events } };
  }

  params(keys: string[], checks: number[], channel: string, origin: string, notify: boolean, ctx: BatchContext): unknown[] {
    const column = <K extends keyof Row>(k: K): Row[K][] => this.rows.map((r) => r[k]);
    const occ = this.rows.filter((r): r is Row & { occurrence: OccurrenceRow } => r.occurrence !== undefined);
    const occColumn = <K extends keyof OccurrenceRow>(k: K): OccurrenceRow[K][] => occ.map((r) => r.occurrence[k]);
    const lags = [...this.lags];
    const texts = this.rows.filter((r) => r.newText !== null);
    const texted = this.rows.some((r) => r.textAbs !== null || r.textOff !== null);
    return [
      keys,
      checks,
      column('off'),
      column('key'),
      column('op'),
      column('stored').map(packText).join(SEPARATOR),
      column('expires_at'),
      column('prevAbs'),
      column('prevOff'),
      column('supersededOff'),
      ...FIELD_NAMES.map((f) => column(f)),
      column('search'),
      column('last_ms'),
      // unnest pads a shorter array with nulls: a batch without texts sends none of their references.
      texted ? column('textAbs') : [],
      texted ? column('textOff') : [],
      texts.map((r) => r.off),
      texts.map((r) => r.newText).join(SEPARATOR),
      this.supersede.map((p) => p[0]),
      this.supersede.map((p) => p[1]),
      this.last,
      channel,
      origin,
      notify,
      occ.map((r) => r.off),
      texted ? occColumn('textAbs').map((r) => r ?? null) : [],
      texted ? occColumn('textOff').map((r) => r ?? null) : [],
      occColumn('observedMicros'),
      occColumn('namespace'),
      occColumn('eventName'),
      occColumn('regardingName'),
      occColumn('body').map(packText).join(SEPARATOR),
      occColumn('type'),
      occColumn('reason'),
      occColumn('repeats'),
      occColumn('seenMs'),
      occColumn('size'),
      occColumn('cluster'),
      lags.map((l) => l[0]),
      lags.map((l) => l[1].min),
      lags.map((l) => l[1].max),
      [...this.checkpoints.keys()],
      [...this.checkpoints.values()],
      ctx.now,
      ctx.markAt,
      this.bytes,
    ];
  }

  /** resolve turns the plan's relative revisions into the ones the batch got. */
  resolve(base: number, outcomes: Outcome[]): BatchResult {
    const changes = this.rows.map((r): Change => {
      const change: Change = { rv: base + r.off, type: TYPES[r.op], key: r.key, json: r.object };
      const prev = r.prevAbs ?? (r.prevOff === null ? null : base + r.prevOff);
      if (prev !== null && r.prevObject !== null) {
        change.prevRv = prev;
        change.prevJson = r.prevObject;
      }
      return change;
    });
    const resolved = outcomes.map((o): Outcome => ('rv' in o ? { rv: base + o.rv, json: o.json } : o));
    return { base, last: base + this.last, changes, outcomes: resolved };
  }

  private write(
    key: string,
    op: 1 | 2 | 3,
    object: string,
    message: string | undefined,
    fields: Fields,
    search: SearchColumns | null,
    expiresAt: number | null,
    prev: Current | undefined,
    occurrence: OccurrenceRow | undefined,
  ): { rv: number; json: string } {
    const off = ++this.last;
    const text = op === Op.DELETED ? undefined : this.text(object, message, prev, off);
    if (text?.occurrence !== undefined && occurrence !== undefined) {
      // The occurrence repeats the version's message: it refers to the same text.
      const cut = cutText(occurrence.body, text.occurrence);
      if (cut !== undefined) occurrence = { ...occurrence, body: cut.stored, size: occurrence.size - occurrence.body.length + cut.stored.length, textAbs: text.textAbs, textOff: text.textOff };
    }
    const row: Row = {
      off,
      key,
      op,
      object,
      // A tombstone keeps the stored text of the version it ends, and its reference.
      stored: op === Op.DELETED ? (prev?.stored ?? object) : (text?.stored ?? object),
      textAbs: op === Op.DELETED ? (prev?.textAbs ?? null) : (text?.textAbs ?? null),
      textOff: op === Op.DELETED ? (prev?.textOff ?? null) : (text?.textOff ?? null),
      newText: text?.newText ?? null,
      expires_at: expiresAt,
      prevAbs: prev?.rv ?? null,
      prevOff: prev?.off ?? null,
      supersededOff: null,
      prevObject: prev?.object ?? null,
      occurrence,
      search: search?.search ?? null,
      last_ms: search?.lastMs ?? null,
      ...pickFields(fields),
    };
    if (prev !== undefined) {
      if (prev.rv !== null) this.supersede.push([prev.rv, off]);
      else this.rows[prev.off! - 1]!.supersededOff = off;
      this.bytes -= prev.stored.length;
    }
    if (op !== Op.DELETED) this.bytes += row.stored.length + (row.newText?.length ?? 0);
    if (occurrence !== undefined) {
      this.bytes += occurrence.size;
      if (occurrence.seenMs !== null) this.lagBounds.note(this.lags, occurrence.seenMs, occurrence.observedMicros);
    }
    this.rows.push(row);
    this.current.set(key, op === Op.DELETED ? undefined : { ...pickFields(fields), rv: null, off, object, stored: row.stored, textAbs: row.textAbs, textOff: row.textOff, expires_at: expiresAt });
    return { rv: off, json: object };
  }

  /**
   * text decides where a version's long message is stored: in the text its previous version refers to when the
   * message is the same (a repeat), else in a new text at this row's revision; undefined when it stays in the row.
   * `occurrence` is the message's JSON string, which the version's occurrence cuts out of its body too.
   */
  private text(
    object: string,
    message: string | undefined,
    prev: Current | undefined,
    off: number,
  ): { stored: string; textAbs: number | null; textOff: number | null; newText: string | null; occurrence: string } | undefined {
    const split = splitText(object, message);
    if (split === undefined) return undefined;
    if (prev !== undefined && (prev.textAbs !== null || prev.textOff !== null) && textOf(prev.stored, prev.object) === split.text) {
      return { stored: split.stored, textAbs: prev.textAbs, textOff: prev.textOff, newText: null, occurrence: split.text };
    }
    return { stored: split.stored, textAbs: null, textOff: off, newText: split.text, occurrence: split.text };
  }
}

/** wireType is how a write function parameter travels: arrays as JSON (the driver's array literals escape every element), JOINED ones as one text. */
function wireType(name: string, t: string): string {
  if (JOINED.has(name)) return 'text';
  return t.endsWith('[]') ? 'json' : t;
}

/** fromWire is the SQL that turns a parameter from its wire type into the write function's type. */
function fromWire(name: string, ref: string, t: string): string {
  if (JOINED.has(name)) return `string_to_array(${ref}::text, chr(${SEPARATOR.charCodeAt(0)}))`;
  if (t.endsWith('[]')) return `ARRAY(SELECT json_array_elements_text(${ref}::json))::${t}`;
  return `${ref}::${t}`;
}

/** jsonArrays encodes the array parameters as JSON text (see the call's SQL). */
function jsonArrays(params: unknown[]): unknown[] {
  return params.map((p) => (Array.isArray(p) ? JSON.stringify(p) : p));
}

function pickFields(f: Fields): Fields {
  return {
    name: f.name,
    involved_kind: f.involved_kind,
    involved_namespace: f.involved_namespace,
    involved_name: f.involved_name,
    involved_uid: f.involved_uid,
    reason: f.reason,
    type: f.type,
    cluster: f.cluster,
  };
}
