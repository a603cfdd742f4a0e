import type { CoreEvent } from '../../api/index.js';
import type { Preconditions } from '../event-store.js';
import { StorageError, isStorageError } from '../errors.js';
import { checkPreconditions, decodeEvent, fieldValue } from '../shared/index.js';
import type { Change } from '../shared/index.js';
import type { PgClient } from './options.js';
import { CURRENT, Op } from './schema.js';

/** Fields are the filter columns of a version row. */
export interface Fields {
  name: string;
  involved_kind: string;
  involved_namespace: string;
  involved_name: string;
  involved_uid: string;
  reason: string;
  type: string;
}

const FIELD_NAMES = ['name', 'involved_kind', 'involved_namespace', 'involved_name', 'involved_uid', 'reason', 'type'] as const;

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
  };
}

/**
 * WriteOp is one write of a batch, decided against the key's current row inside
 * the batch's transaction: `put` is a compare-and-swap on the current row's
 * revision (0 for a missing key), `expire` deletes only the version the sweep
 * saw, and only if it is still expired.
 */
export type WriteOp =
  | { kind: 'create'; key: string; json: string; fields: Fields; expiresAt: number | null }
  | { kind: 'put'; key: string; expect: number; json: string; fields: Fields; expiresAt: number | null }
  | { kind: 'delete'; key: string; preconditions: Preconditions | undefined }
  | { kind: 'expire'; key: string; expect: number; now: number };

/** Outcome is what became of one WriteOp: written at `rv` (with the stored text; a delete's is the last state), lost a compare-and-swap, failed, or had nothing to do. */
export type Outcome = { rv: number; json: string } | { conflict: true } | { error: StorageError } | { skipped: true };

/** BatchResult is a committed batch: revisions base+1..last, and the changes to publish. */
export interface BatchResult {
  base: number;
  last: number;
  changes: Change[];
  outcomes: Outcome[];
}

interface Row extends Fields {
  rv: number;
  key: string;
  op: number;
  object: string;
  prev_rv: number | null;
  superseded_rv: number | null;
  expires_at: number | null;
  /** stored: the row was committed before this batch (so superseding it is an UPDATE). */
  stored: boolean;
}

interface StoredRow extends Fields {
  rv: string;
  key: string;
  object: string;
  expires_at: string | null;
}

const TYPES = { [Op.ADDED]: 'ADDED', [Op.MODIFIED]: 'MODIFIED', [Op.DELETED]: 'DELETED' } as const;

/**
 * WriteBatch runs a group of writes as one transaction. The transaction first
 * locks the revision counter row: writers of every replica take turns there, so
 * a transaction reads the state all earlier ones committed, revisions are handed
 * out without gaps, and commit order is revision order (a transaction that sees
 * revision N committed sees every revision below it). The rest costs three round
 * trips: read the current rows of the batch's keys, write every row and the
 * counter in one statement (with the NOTIFY that wakes the other replicas), and
 * commit.
 */
export class WriteBatch {
  constructor(
    private readonly s: string,
    private readonly channel: string,
  ) {}

  async run(client: PgClient, ops: readonly WriteOp[]): Promise<BatchResult> {
    await client.query('BEGIN');
    try {
      const locked = await client.query<{ value: string }>(`SELECT value FROM ${this.s}.meta WHERE name = 'revision' FOR UPDATE`);
      const base = Number(locked.rows[0]?.value ?? 0);
      const keys = [...new Set(ops.map((o) => o.key))];
      const stored = await client.query<StoredRow>(
        `SELECT rv, key, object, expires_at, ${FIELD_NAMES.join(', ')} FROM ${this.s}.versions WHERE key = ANY($1::text[]) AND ${CURRENT}`,
        [keys],
      );
      const current = new Map<string, Row | undefined>();
      for (const r of stored.rows) {
        current.set(r.key, { ...r, rv: Number(r.rv), op: Op.ADDED, prev_rv: null, superseded_rv: null, expires_at: r.expires_at === null ? null : Number(r.expires_at), stored: true });
      }
      const plan = new Plan(base, current);
      const outcomes = ops.map((op) => plan.apply(op));
      if (plan.rows.length === 0) {
        await client.query('ROLLBACK');
        return { base, last: base, changes: [], outcomes };
      }
      await client.query(this.writeSql(), plan.params(this.channel));
      await client.query('COMMIT');
      return { base, last: plan.last, changes: plan.changes, outcomes };
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  private writeSql(): string {
    const s = this.s;
    const cols = ['rv', 'key', 'op', 'object', 'prev_rv', 'superseded_rv', 'expires_at', ...FIELD_NAMES];
    const types = ['bigint', 'text', 'smallint', 'text', 'bigint', 'bigint', 'bigint', ...FIELD_NAMES.map(() => 'text')];
    const n = cols.length;
    return (
      `WITH ins AS (INSERT INTO ${s}.versions (${cols.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})), ` +
      `sup AS (UPDATE ${s}.versions v SET superseded_rv = u.s FROM unnest($${n + 1}::bigint[], $${n + 2}::bigint[]) AS u(p, s) WHERE v.rv = u.p), ` +
      `ctr AS (UPDATE ${s}.meta SET value = $${n + 3} WHERE name = 'revision') ` +
      `SELECT pg_notify($${n + 4}, $${n + 3}::text)`
    );
  }
}

/** Plan applies a batch's writes, in order, to the current rows of its keys, and collects the rows to store. */
class Plan {
  readonly rows: Row[] = [];
  readonly changes: Change[] = [];
  private readonly supersede: [number, number][] = [];
  last: number;

  constructor(
    base: number,
    private readonly current: Map<string, Row | undefined>,
  ) {
    this.last = base;
  }

  apply(op: WriteOp): Outcome {
    const cur = this.current.get(op.key);
    try {
      switch (op.kind) {
        case 'create':
          if (cur !== undefined) throw new StorageError('KeyExists', `${op.key} already exists`, { key: op.key, currentResourceVersion: this.last });
          return this.write(op.key, Op.ADDED, op.json, op.fields, op.expiresAt, undefined);
        case 'put':
          if ((cur?.rv ?? 0) !== op.expect) return { conflict: true };
          return this.write(op.key, cur === undefined ? Op.ADDED : Op.MODIFIED, op.json, op.fields, op.expiresAt, cur);
        case 'delete':
          if (cur === undefined) throw new StorageError('KeyNotFound', `${op.key} not found`, { key: op.key, currentResourceVersion: this.last });
          if (op.preconditions !== undefined) checkPreconditions(op.key, decodeEvent(cur.object, cur.rv), op.preconditions, this.last);
          return this.write(op.key, Op.DELETED, cur.object, cur, null, cur);
        case 'expire':
          // The event may have been renewed or deleted since the sweep read it.
          if (cur === undefined || cur.rv !== op.expect || cur.expires_at === null || cur.expires_at > op.now) return { skipped: true };
          return this.write(op.key, Op.DELETED, cur.object, cur, null, cur);
      }
    } catch (e) {
      if (isStorageError(e)) return { error: e };
      throw e;
    }
  }

  params(channel: string): unknown[] {
    const column = <K extends keyof Row>(k: K): Row[K][] => this.rows.map((r) => r[k]);
    return [
      column('rv'),
      column('key'),
      column('op'),
      column('object'),
      column('prev_rv'),
      column('superseded_rv'),
      column('expires_at'),
      ...FIELD_NAMES.map((f) => column(f)),
      this.supersede.map((p) => p[0]),
      this.supersede.map((p) => p[1]),
      this.last,
      channel,
    ];
  }

  private write(key: string, op: 1 | 2 | 3, object: string, fields: Fields, expiresAt: number | null, prev: Row | undefined): { rv: number; json: string } {
    const rv = ++this.last;
    const row: Row = { rv, key, op, object, prev_rv: prev?.rv ?? null, superseded_rv: null, expires_at: expiresAt, stored: false, ...pickFields(fields) };
    if (prev !== undefined) {
      if (prev.stored) this.supersede.push([prev.rv, rv]);
      else prev.superseded_rv = rv;
    }
    this.rows.push(row);
    this.current.set(key, op === Op.DELETED ? undefined : row);
    const change: Change = { rv, type: TYPES[op], key, json: object };
    if (prev !== undefined) {
      change.prevJson = prev.object;
      change.prevRv = prev.rv;
    }
    this.changes.push(change);
    return { rv, json: object };
  }
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
  };
}
