/**
 * A store's reads of current and past versions: get, and lists at a revision
 * (keyset pages read in one snapshot, filters, remaining counts).
 */
import type { CoreEvent } from '../../api/index.js';
import type { ListOptions, ListResult } from '../event-store.js';
import { StorageError } from '../errors.js';
import { RemainingCounts, decodeEvent, eventKey, listRevision, matchesFilter, namespaceRange, pageOfHeld, selectsAll } from '../shared/index.js';
import type { HeldKey } from '../shared/index.js';
import type { PostgresConnection } from './connection.js';
import { ListQueries, SINCE_CANDIDATES } from './list-query.js';
import type { ListRow, ListScope, Query } from './list-query.js';
import { objectOf } from './packed-rows.js';
import type { PgPool } from './options.js';

/** MAX_LIST_BATCH caps the rows a filtered list reads per query, as upstream caps its etcd pages. */
const MAX_LIST_BATCH = 10_000;

/** PostgresLists answers a store's gets and lists over its connection. */
export class PostgresLists {
  private readonly lists: ListQueries;
  private readonly remaining = new RemainingCounts();
  /** statementNames names each text of `named`'s statements (a few: the shapes of a filter, not its values). */
  private readonly statementNames = new Map<string, string>();
  /**
   * sinceRead is the last read through `cur_since` (`sincePage`): its statement and values but the start, the
   * revision its keys were chosen at, its first start, and the rows it chose, in key order.
   */
  private sinceRead: { query: string; revision: number; start: string; keys: HeldKey[] } | undefined;

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

  /**
   * sincePage reads a page of a latest read of a window's failures through `cur_since` (`ListQueries.sinceKeys`): the
   * window's rows are chosen once, on the index alone, and held, and each page of the read (this call's, and those of
   * the calls that go on from its last key) reads its rows by revision, for as long as the store's revision is the
   * one they were chosen at; when a write has come between, the page is read as `pageSince` reads it, in one
   * snapshot. Undefined when the scope is no such read, or has more than SINCE_CANDIDATES rows: then the key order
   * reads it.
   */
  private async sincePage(pool: Pick<PgPool, 'query'>, scope: ListScope, start: string, size: number): Promise<ListRow[] | undefined> {
    const chosen = this.lists.sinceKeys(scope, start);
    if (chosen === undefined) return undefined;
    const query = `${chosen.text}\u0000${JSON.stringify(chosen.values.slice(1))}`;
    let read = this.sinceRead;
    if (read === undefined || read.query !== query || start < read.start) {
      const rows = await this.c.query<{ revision: string; rv: string | null; key: string | null }>(pool, chosen);
      if (rows.length > SINCE_CANDIDATES) return undefined;
      const keys = rows.filter((r) => r.rv !== null && r.key !== null).map((r) => ({ rv: Number(r.rv), key: r.key! }));
      read = this.sinceRead = { query, revision: Number(rows[0]!.revision), start, keys };
    }
    const { page, last } = pageOfHeld(read.keys, start, size);
    // Its last page ends the read: another read of the same rows chooses them again.
    if (last) this.sinceRead = undefined;
    const rows = await this.c.query<ListRow>(pool, this.lists.objects(page.map((k) => k.rv)));
    if (Number(rows[0]!.revision) === read.revision) return rows;
    this.sinceRead = undefined;
    const again = await this.c.query<ListRow>(pool, this.lists.pageSince(scope, start, size)!);
    return Number(again[0]?.candidates ?? 0) > SINCE_CANDIDATES ? undefined : again;
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
      const rows = (await this.sincePage(pool, scope, start, size)) ?? (await c.query<ListRow>(pool, this.named(scope, this.lists.page(scope, start, size))));
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
