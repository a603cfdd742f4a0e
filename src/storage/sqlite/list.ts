/**
 * The reads of a store's current and past versions: get, and lists at a
 * revision (keyset pages, filters, remaining counts). Lists read on the
 * connection's list connection, so paging never churns the writer's cache.
 */
import type { CoreEvent } from '../../api/index.js';
import type { IndexedField, ListOptions, ListedVersion, VersionList } from '../event-store.js';
import { StorageError } from '../errors.js';
import { DEFAULT_MAX_COUNT_REMAINING, RemainingCounts, decodeEvent, eventKey, listRevision, matchesFilter, namespaceRange, selectsAll, storedInvolvedName, storedLabels } from '../shared/index.js';
import type { SqliteConnection } from './connection.js';
import type { ListRow, ListScope } from './list-query.js';
import type { StoredTexts } from './texts.js';
import { FIELD_COLUMNS, HASHED_FIELDS } from './schema.js';
import { PageObjects } from './page-objects.js';
import { followerRead } from './watch.js';

/** MAX_LIST_BATCH caps the rows a filtered list reads per query, as upstream caps its etcd pages. */
const MAX_LIST_BATCH = 10_000;

/** listedVersion is a listed row, decoded on demand; `decoded` (a filter's decoding) is handed out first rather than decoded again. */
function listedVersion(rv: number, texts: StoredTexts, object: () => Buffer, decoded?: CoreEvent): ListedVersion {
  let first = decoded;
  return {
    resourceVersion: rv,
    object: () => {
      const e = first ?? decodeEvent(texts.json(object()), rv);
      first = undefined;
      return e;
    },
  };
}

/**
 * selectionBy tells how much of a row decides a filter: `columns` when the key range, the row's
 * field columns (each holding its field's value itself, not a hash) and, when the filter has a
 * label selector, its `labels` column decide it; `name` when those and the involved object's name,
 * whose column holds its hash, decide it (the name is read from the object's text, nothing else of
 * it); undefined when the event has to be decoded and matched.
 */
function selectionBy(options: ListOptions): 'columns' | 'name' | undefined {
  if (options.predicateIsSelection !== true || options.activeIn !== undefined) return undefined;
  let by: 'columns' | 'name' = 'columns';
  for (const [field, value] of Object.entries(options.fieldEquals ?? {}) as [IndexedField, string | undefined][]) {
    if (value === undefined) continue;
    if (FIELD_COLUMNS[field] === undefined) return undefined;
    if (HASHED_FIELDS.has(field)) {
      if (field !== 'involvedObject.name') return undefined;
      by = 'name';
    }
  }
  return by;
}

/** LabelRow is a row of `pageLabels`. */
type LabelRow = { rv: number; key: string; labels: string | null };

/**
 * labelsMatcher is `match` over `labels` columns: each distinct column is parsed and matched
 * once per list, as the events of one list share few sets of labels.
 */
function labelsMatcher(match: NonNullable<ListOptions['labelMatch']>): (labels: string | null) => boolean {
  const seen = new Map<string | null, boolean>();
  return (labels) => {
    let kept = seen.get(labels);
    if (kept === undefined) {
      kept = match(labels === null ? undefined : (JSON.parse(labels) as Record<string, string>));
      seen.set(labels, kept);
    }
    return kept;
  };
}

/** SqliteLists answers a store's gets and lists over its connection. */
export class SqliteLists {
  private readonly maxCount: number;
  private readonly remaining = new RemainingCounts();

  constructor(
    private readonly c: SqliteConnection,
    maxCountRemaining: number | undefined,
  ) {
    this.maxCount = maxCountRemaining !== undefined && maxCountRemaining > 0 ? maxCountRemaining : DEFAULT_MAX_COUNT_REMAINING;
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.c.read(() => {
      const key = eventKey(namespace, name);
      const row = this.c.stmt.current.get(key);
      if (row === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.c.rv });
      return decodeEvent(this.c.texts.json(row.object), row.rv);
    });
  }

  listVersions(options: ListOptions): Promise<VersionList> {
    return this.c.read(() => followerRead(this.c, () => this.listAt(options)));
  }

  /** newestVersions reads current versions newest first, in revision order down the table (no index to step through). */
  newestVersions(options: { limit: number; before?: number }): Promise<ListedVersion[]> {
    return this.c.read(() =>
      followerRead(this.c, () => this.c.lists.newest(options.before ?? Number.MAX_SAFE_INTEGER, options.limit).map((r) => listedVersion(r.rv, this.c.lists.texts, () => r.object))),
    );
  }

  private listAt(options: ListOptions): VersionList {
    const c = this.c;
    const at = listRevision(options, c.rv, c.compacted);
    const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
    const scope: ListScope = { at, latest: at === c.rv, high, fieldEquals: options.fieldEquals, activeIn: options.activeIn, anyOf: options.anyOf };
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    let start = options.startKey !== undefined && options.startKey > low ? options.startKey : low;
    const from = start;
    const items: ListedVersion[] = [];
    // Without a filter past the key range and the field columns every row is an item: it stays encoded until asked for.
    const by = selectionBy(options);
    const all = selectsAll(options) || (by === 'columns' && options.labelMatch === undefined);
    // With a label selector past them, only the labels column of each row is read; the items stay encoded too.
    const labels = by === 'columns' && !all && options.labelMatch !== undefined ? labelsMatcher(options.labelMatch) : undefined;
    // With the involved object's name, its name is read from each row's text, and its labels (if asked) from the text too.
    const name = by === 'name' ? (options.fieldEquals?.['involvedObject.name'] ?? '') : undefined;
    const maxExamined = options.maxExamined !== undefined && options.maxExamined > 0 ? options.maxExamined : Infinity;
    // A filtered read examines maxExamined rows at most: rows past them would be read for nothing.
    let batch = Math.min(limit + 1, all ? Infinity : maxExamined, MAX_LIST_BATCH);
    let examined = 0;
    let more = false;
    for (;;) {
      const rows = all
        ? c.lists.pageKeys(scope, start, batch)
        : labels !== undefined
          ? c.lists.pageLabels(scope, start, batch)
          : (c.lists.pageSince(scope, start, batch) ?? c.lists.page(scope, start, batch));
      // The objects of the rows kept, read together when asked for.
      const kept: number[] = [];
      for (const row of rows) {
        if (items.length + kept.length >= limit) {
          more = true;
          break;
        }
        start = row.key;
        if (all) {
          kept.push(row.rv);
          continue;
        }
        if (labels !== undefined) {
          if (labels((row as LabelRow).labels)) kept.push(row.rv);
        } else {
          const object = (row as ListRow).object;
          const json = this.c.lists.texts.json(object);
          if (name !== undefined) {
            if ((storedInvolvedName(json) ?? '') === name && (options.labelMatch === undefined || options.labelMatch(storedLabels(json)))) {
              items.push(listedVersion(row.rv, this.c.lists.texts, () => object));
            }
          } else {
            const event = decodeEvent(json, row.rv);
            if (matchesFilter(event, options)) items.push(listedVersion(row.rv, this.c.lists.texts, () => object, event));
          }
        }
        if (++examined >= maxExamined && items.length + kept.length < limit) {
          // Stopped early: the caller reads on from this key, in another turn of the loop.
          more = true;
          break;
        }
      }
      if (kept.length > 0) {
        const objects = new PageObjects(kept, (rvs) => c.lists.objects(rvs));
        kept.forEach((rv, i) => items.push(this.unread(rv, () => objects.object(i))));
      }
      if (more) break;
      if (items.length >= limit) {
        // As against etcd, any key past the last item means more, whether or not the selector would keep it
        // (the field selector's rows were filtered in SQL: the keys it left out count too).
        more = c.lists.pageKeys({ ...scope, fieldEquals: undefined, activeIn: undefined, anyOf: undefined }, start, 1).length > 0;
        break;
      }
      if (rows.length < batch) break;
      // A filter dropped rows: read further in larger steps, as upstream does against etcd.
      batch = Math.min(batch * 2, MAX_LIST_BATCH);
    }
    const result: VersionList = { items, resourceVersion: at };
    if (more) {
      result.lastKey = start;
      if (options.countRemaining === true) {
        const remaining = this.remainingAfter(scope, from, start, all ? items.length : undefined);
        if (remaining !== undefined) result.remainingItemCount = remaining;
      }
    }
    return result;
  }

  /**
   * remainingAfter is the count of keys after `last` (`remainingItemCount`), or undefined when more
   * than maxCount follow. A count steps over up to twice maxCount keys: when it stops there, the
   * pages after it (taking `taken` items each, the keys that follow `from`) know that more than
   * maxCount follow them until they have taken maxCount items, without counting again. A listing
   * of N events then steps over about 2N index entries in all, where a count of each page's rest,
   * up to maxCount, stepped over N ÷ limit × maxCount (20 per item, at 500 a page).
   */
  private remainingAfter(scope: ListScope, from: string, last: string, taken: number | undefined): number | undefined {
    const { at, high } = scope;
    const carried = this.remaining.carried(at, high, from, taken);
    if (carried !== undefined) {
      this.remaining.remember(at, high, last, carried);
      return carried <= this.maxCount ? carried : undefined;
    }
    const floor = this.remaining.carriedFloor(at, high, from, taken);
    if (floor !== undefined && floor > this.maxCount) {
      this.remaining.rememberFloor(at, high, last, floor);
      return undefined;
    }
    const reach = 2 * this.maxCount;
    const n = this.c.lists.count(scope, last, reach);
    if (n === undefined) {
      this.remaining.rememberFloor(at, high, last, reach + 1);
      return undefined;
    }
    this.remaining.remember(at, high, last, n);
    return n <= this.maxCount ? n : undefined;
  }

  /**
   * unread is a listed version whose object is read when asked for. The row stays: a version
   * visible at a list's revision is purged only once compaction passes that revision, a history
   * window after the list; were it gone, the answer is that the revision has expired.
   */
  private unread(rv: number, read: () => Buffer | undefined = () => this.c.lists.object(rv)): ListedVersion {
    return listedVersion(rv, this.c.lists.texts, () => {
      const object = read();
      if (object === undefined) throw new StorageError('ResourceVersionExpired', `the version at revision ${rv} has been compacted`, { resourceVersion: rv });
      return object;
    });
  }
}
