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

/** Durability says when PostgreSQL answers a commit: `sync` after the WAL is on disk, `async` once it is in the server's memory. */
export type Durability = 'sync' | 'async';

/** Row is a version row planned with revisions relative to the batch's base (1..n). */
interface Row extends Fields {
  off: number;
  key: string;
  op: 1 | 2 | 3;
  object: string;
  expires_at: number | null;
  /** prev is the row this one replaces: a stored row (by revision) or one of this batch (by offset). */
  prevAbs: number | null;
  prevOff: number | null;
  supersededOff: number | null;
  /** prevObject is the stored text of the replaced row (not a column: the watch change carries it). */
  prevObject: string | null;
}

/** Current is a key's current row as the batch sees it. */
interface Current extends Fields {
  rv: number | null;
  off: number | null;
  object: string;
  expires_at: number | null;
}

interface StoredRow extends Fields {
  rv: string;
  key: string;
  object: string;
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
  ['old_rvs', 'bigint[]'],
  ['old_sup_off', 'int[]'],
  ['n', 'int'],
  ['channel', 'text'],
  ['origin', 'text'],
  ['durable', 'boolean'],
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
  const cols = ['rv', 'key', 'op', 'object', 'expires_at', 'prev_rv', 'superseded_rv', ...FIELD_NAMES];
  const unnested = ['offs', 'keys', 'ops', 'objects', 'expires', 'prev_abs', 'prev_off', 'sup_off', ...FIELD_NAMES.map((f) => `f_${f}`)];
  // The row alias names differ from the parameter names, which PL/pgSQL would find ambiguous.
  const alias = unnested.map((_, i) => `c${i}`);
  const vals = ['base + u.c0', 'u.c1', 'u.c2', 'u.c3', 'u.c4', 'coalesce(u.c5, base + u.c6)', 'base + u.c7', ...FIELD_NAMES.map((_, i) => `u.c${8 + i}`)];
  return `
CREATE OR REPLACE FUNCTION ${s}.write_batch(${ARGS.map(([n, t]) => `${n} ${t}`).join(', ')}) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE base bigint;
BEGIN
  IF NOT durable THEN PERFORM set_config('synchronous_commit', 'off', true); END IF;
  SELECT value INTO base FROM ${s}.meta WHERE name = 'revision' FOR UPDATE;
  -- Correlated lookups and = ANY keep every statement on its index whatever the table's statistics say.
  IF EXISTS (SELECT 1 FROM unnest(check_keys, check_rvs) AS c(k, r)
             WHERE coalesce((SELECT v.rv FROM ${s}.versions v WHERE v.key = c.k AND v.superseded_rv IS NULL AND v.op <> 3), 0) <> c.r) THEN
    RETURN -1;
  END IF;
  -- Replaced rows leave the current-key index before their successors enter it.
  UPDATE ${s}.versions SET superseded_rv = base + old_sup_off[array_position(old_rvs, rv)] WHERE rv = ANY(old_rvs);
  INSERT INTO ${s}.versions (${cols.join(', ')})
    SELECT ${vals.join(', ')} FROM unnest(${unnested.join(', ')}) AS u(${alias.join(', ')});
  UPDATE ${s}.meta SET value = base + n WHERE name = 'revision';
  PERFORM pg_notify(channel, origin || ' ' || (base + n));
  RETURN base;
END
$fn$;`;
}

/**
 * WriteBatch commits a group of writes as one transaction. It reads the current
 * rows of the batch's keys (a batch of creates assumes none exist, which the
 * write function checks), plans every write against them in order, and calls
 * the write function; a concurrent writer that changed one of the keys makes it
 * read and plan again.
 */
export class WriteBatch {
  private readonly call: string;

  constructor(
    private readonly s: string,
    private readonly channel: string,
    /** origin names this replica in its notifications, so its listener can skip its own commits (they are delivered directly). */
    private readonly origin: string,
    private readonly durability: Durability,
  ) {
    const args = ARGS.map(([name, t], i) => (name === 'objects' ? `string_to_array($${i + 1}::text, chr(${SEPARATOR.charCodeAt(0)}))` : `$${i + 1}::${t}`));
    this.call = `SELECT ${s}.write_batch(${args.join(', ')}) AS base`;
  }

  async run(client: Pick<PgClient, 'query'>, ops: readonly WriteOp[]): Promise<BatchResult> {
    let assumeAbsent = ops.every((o) => o.kind === 'create');
    for (;;) {
      const current = new Map<string, Current | undefined>();
      const keys = [...new Set(ops.map((o) => o.key))];
      if (!assumeAbsent) {
        const stored = await client.query<StoredRow>(
          `SELECT rv, key, object, expires_at, ${FIELD_NAMES.join(', ')} FROM ${this.s}.versions WHERE key = ANY($1::text[]) AND ${CURRENT}`,
          [keys],
        );
        for (const r of stored.rows) {
          current.set(r.key, { ...pickFields(r), rv: Number(r.rv), off: null, object: r.object, expires_at: r.expires_at === null ? null : Number(r.expires_at) });
        }
      }
      const checks = keys.map((k) => current.get(k)?.rv ?? 0);
      const plan = new Plan(current);
      const outcomes = ops.map((op) => plan.apply(op));
      if (plan.rows.length === 0) return { base: 0, last: 0, changes: [], outcomes };
      const { rows } = await client.query<{ base: string }>(this.call, plan.params(keys, checks, this.channel, this.origin, this.durability === 'sync'));
      const base = Number(rows[0]?.base ?? -1);
      if (base < 0) {
        assumeAbsent = false;
        continue;
      }
      return plan.resolve(base, outcomes);
    }
  }
}

/** Plan applies a batch's writes, in order, to the current rows of its keys, and collects the rows to store. */
class Plan {
  readonly rows: Row[] = [];
  private readonly supersede: [number, number][] = [];
  private last = 0;

  constructor(private readonly current: Map<string, Current | undefined>) {}

  apply(op: WriteOp): Outcome {
    const cur = this.current.get(op.key);
    try {
      switch (op.kind) {
        case 'create':
          if (cur !== undefined) throw new StorageError('KeyExists', `${op.key} already exists`, { key: op.key });
          return this.write(op.key, Op.ADDED, op.json, op.fields, op.expiresAt, undefined);
        case 'put':
          // A key written earlier in this batch has no revision yet, so a compare-and-swap against it always loses.
          if (cur === undefined ? op.expect !== 0 : cur.rv !== op.expect) return { conflict: true };
          return this.write(op.key, cur === undefined ? Op.ADDED : Op.MODIFIED, op.json, op.fields, op.expiresAt, cur);
        case 'delete':
          if (cur === undefined) throw new StorageError('KeyNotFound', `${op.key} not found`, { key: op.key });
          if (op.preconditions !== undefined) {
            // A version written earlier in this batch is checked against the revision it will get: none yet, so a resourceVersion precondition fails.
            checkPreconditions(op.key, decodeEvent(cur.object, cur.rv ?? 0), op.preconditions, 0);
          }
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

  params(keys: string[], checks: number[], channel: string, origin: string, durable: boolean): unknown[] {
    const column = <K extends keyof Row>(k: K): Row[K][] => this.rows.map((r) => r[k]);
    return [
      keys,
      checks,
      column('off'),
      column('key'),
      column('op'),
      column('object').join(SEPARATOR),
      column('expires_at'),
      column('prevAbs'),
      column('prevOff'),
      column('supersededOff'),
      ...FIELD_NAMES.map((f) => column(f)),
      this.supersede.map((p) => p[0]),
      this.supersede.map((p) => p[1]),
      this.last,
      channel,
      origin,
      durable,
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

  private write(key: string, op: 1 | 2 | 3, object: string, fields: Fields, expiresAt: number | null, prev: Current | undefined): { rv: number; json: string } {
    const off = ++this.last;
    const row: Row = { off, key, op, object, expires_at: expiresAt, prevAbs: prev?.rv ?? null, prevOff: prev?.off ?? null, supersededOff: null, prevObject: prev?.object ?? null, ...pickFields(fields) };
    if (prev !== undefined) {
      if (prev.rv !== null) this.supersede.push([prev.rv, off]);
      else this.rows[prev.off! - 1]!.supersededOff = off;
    }
    this.rows.push(row);
    this.current.set(key, op === Op.DELETED ? undefined : { ...pickFields(fields), rv: null, off, object, expires_at: expiresAt });
    return { rv: off, json: object };
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
