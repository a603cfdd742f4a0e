/**
 * A store's reads of current and past versions: get, and lists at a revision
 * (keyset pages read in one snapshot, filters, remaining counts).
 */
import type { CoreEvent } from '../../api/index.js';
import type { ListOptions, ListResult } from '../event-store.js';
import { StorageError } from '../errors.js';
import { RemainingCounts, decodeEvent, eventKey, listRevision, matchesFilter, namespaceRange, selectsAll } from '../shared/index.js';
import type { PostgresConnection } from './connection.js';
import { ListQueries, SINCE_CANDIDATES } from './list-query.js';
import type { ListRow, ListScope, Query } from './list-query.js';
import { objectOf } from './packed-rows.js';

/** MAX_LIST_BATCH caps the rows a filtered list reads per query, as upstream caps its etcd pages. */
const MAX_LIST_BATCH = 10_000;

/** PostgresLists answers a store's gets and lists over its connection. */
export class PostgresLists {
  private readonly lists: ListQueries;
  private readonly remaining = new RemainingCounts();
  /** statementNames names each text of `named`'s statements (a few: the shapes of a filter, not its values). */
  private readonly statementNames = new Map<string, string>();

  constructor(private readonly c: PostgresConnection) {
    this.lists = new ListQueries(c.s);
  }

  async get(namespace: string, name: string): Promise<CoreEvent> {
    const key = eventKey(namespace, name);
    const cur = await this.c.current(key);
    if (cur === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.c.state?.feed.delivered });
    return decodeEvent(cur.object, cur.rv);
  }

  /**
   * named prepares the page statement of one object's events (by its name's index) once per connection: a reader
   * asks for many objects' events in turn (incidents, the progress of each failing pod), the same statement with
   * other values, and its plan is the same for any name, while planning it among the table's indexes costs more
   * than running it.
   */
  private named(scope: ListScope, q: Query): Query & { name?: string } {
    if (scope.fieldEquals?.['involvedObject.name'] === undefined) return q;
    let name = this.statementNames.get(q.text);
    if (name === undefined) {
      name = `${this.c.s}_list_by_name_${this.statementNames.size}`;
      this.statementNames.set(q.text, name);
    }
    return { ...q, name };
  }

  async list(options: ListOptions): Promise<ListResult> {
    const c = this.c;
    const { pool } = await c.open();
    const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    let start = options.startKey !== undefined && options.startKey > low ? options.startKey : low;
    const from = start;
    const exact = options.match === 'Exact' && options.resourceVersion !== undefined && options.resourceVersion > 0;
    // The first page read fixes the revision; further reads (a filter dropped rows) read a snapshot at it.
    let scope: ListScope = { at: exact ? options.resourceVersion : undefined, high, fieldEquals: options.fieldEquals, anyOf: options.anyOf, activeIn: options.activeIn };
    let at: number | undefined;
    let batch = Math.min(limit + 1, MAX_LIST_BATCH);
    const items: CoreEvent[] = [];
    const maxExamined = options.maxExamined !== undefined && options.maxExamined > 0 ? options.maxExamined : Infinity;
    let examined = 0;
    let more = false;
    for (;;) {
      // Rows past what may be examined are not read at all.
      const size = Math.min(batch, maxExamined - examined + 1);
      // A latest read of a window's failures reads only the window's rows, unless more than a few pages of them are kept.
      const since = this.lists.pageSince(scope, start, size);
      let rows = since === undefined ? undefined : await c.query<ListRow>(pool, since);
      if (rows === undefined || Number(rows[0]?.candidates ?? 0) > SINCE_CANDIDATES) rows = await c.query<ListRow>(pool, this.named(scope, this.lists.page(scope, start, size)));
      const head = rows[0]!;
      const revision = Number(head.revision);
      const compacted = Number(head.compacted);
      if (at === undefined) {
        at = listRevision(options, revision, compacted);
        scope = { ...scope, at };
      } else if (at < compacted) {
        throw new StorageError('ResourceVersionExpired', `resourceVersion ${at} was compacted while it was read`, { resourceVersion: at, currentResourceVersion: revision });
      }
      let read = 0;
      for (const row of rows) {
        if (row.rv === null || row.key === null || (row.object === null && (row.object_z ?? null) === null)) continue;
        read++;
        if (items.length >= limit) {
          more = true;
          break;
        }
        start = row.key;
        const event = decodeEvent(objectOf(row)!, Number(row.rv));
        if (matchesFilter(event, options)) items.push(event);
        if (++examined >= maxExamined && items.length < limit) {
          // Stopped early: the caller reads on from this key, in another turn of the loop.
          more = true;
          break;
        }
      }
      if (more) break;
      if (items.length >= limit) {
        // As against etcd, any key past the last item means more, whether or not the selector would keep it
        // (the field selector's rows were filtered in SQL: the keys it left out count too).
        const probe = await c.query<ListRow>(pool, this.lists.page({ ...scope, fieldEquals: undefined, anyOf: undefined }, start, 1));
        more = probe.some((r) => r.rv !== null);
        break;
      }
      if (read < size) break;
      // A filter dropped rows: read further in larger steps, as upstream does against etcd.
      batch = Math.min(batch * 2, MAX_LIST_BATCH);
    }
    const result: ListResult = { items, resourceVersion: at };
    if (more) {
      result.lastKey = start;
      if (options.countRemaining === true) {
        let remaining = this.remaining.carried(at, high, from, selectsAll(options) ? items.length : undefined);
        if (remaining === undefined) {
          const [row] = await c.query<{ n: string }>(pool, this.lists.count(at, high, start));
          remaining = Number(row?.n ?? 0);
        }
        this.remaining.remember(at, high, start, remaining);
        result.remainingItemCount = remaining;
      }
    }
    return result;
  }
}
