import { CORE_API, eventClockFreeCells, eventSeenTimes, eventTable, translateMsSince } from '../../api/index.js';
import type { CoreEvent, EventApi, IncludeObject, ListMeta } from '../../api/index.js';
import { LruCache } from '../../internal/index.js';
import type { ListedVersion } from '../../storage/index.js';
import { listItemJson, listShell } from '../rest/views.js';

/**
 * DEFAULT_RENDER_CACHE_MIB bounds the rendered versions a server keeps (`--render-cache-size`):
 * 64 MiB holds the list items and Table rows of some 40,000 typical events, the
 * 1-hour window of a busy cluster, whatever the size of the store.
 */
export const DEFAULT_RENDER_CACHE_MIB = 64;

/** ENTRY_OVERHEAD is what an entry costs past its bytes (map slot, object, Buffer header), counted against the bound. */
const ENTRY_OVERHEAD = 160;

/** TableRowParts are a version's Table row apart from its two ages, which change with the clock. */
interface TableRowParts {
  /** firstMs and lastMs are the times of the ages (`eventSeenTimes`), read once. */
  firstMs: number | undefined;
  lastMs: number | undefined;
  lastIsFirst: boolean;
  /** middle is the JSON of the cells between Last Seen and First Seen, tail of those after First Seen (no brackets). */
  middle: string;
  tail: string;
  /** metadata is the JSON of the row's PartialObjectMetadata. */
  metadata: string;
}

/** Entry is a kept rendering and the bytes it counts against the bound. */
interface Entry {
  value: Buffer | TableRowParts;
  size: number;
}

/** Slots of one version: its list item in each API, and its Table row. */
const CORE_ITEM = 0;
const EVENTS_V1_ITEM = 1;
const TABLE_ROW = 2;
const SLOTS = 4;

const COMMA = Buffer.from(',');

/**
 * RenderedVersions keeps the wire bytes of stored event versions, keyed by
 * resourceVersion (which names one version store-wide, see `ListedVersion`):
 * each version's list item in each API group/version and its Table row. A list
 * answer is spliced from them, so a version listed again is neither decoded
 * nor encoded. Least recently used entries go first past `maxBytes`; 0 keeps
 * nothing.
 */
export class RenderedVersions {
  /** entries evict in constant time (LruCache's recency list): a listing larger than the cache evicts one per row. */
  private readonly entries: LruCache<number, Entry>;

  /** misses counts the versions rendered because they were not kept: a page that had any was read cold. */
  misses = 0;

  constructor(readonly maxBytes: number) {
    this.entries = new LruCache({ maxEntries: Infinity, maxWeight: maxBytes, weigh: (e) => e.size });
  }

  /** prepare keeps rendered what `table` (with `includeObject`) or `list` in `api` would read of `items`, answering nothing. */
  prepare(api: EventApi, items: readonly ListedVersion[], as: RenderAs): void {
    for (const v of items) {
      if (!as.table || as.includeObject === 'Object') this.item(api, v);
      if (as.table) this.tableRow(v);
    }
  }

  /** size is the bytes held, overhead included. */
  get size(): number {
    return this.entries.weight;
  }

  /**
   * list is the JSON of an EventList of `items`, as `listFor` renders it; past `bound.maxBytes` of items it
   * ends after the last that fits (at least one), under the list metadata `bound.cut` gives for that many.
   */
  list(api: EventApi, items: readonly ListedVersion[], metadata: ListMeta, bound?: AnswerBound): Buffer {
    const parts: Buffer[] = [];
    let size = 0;
    let kept = items.length;
    for (let i = 0; i < items.length; i++) {
      const item = this.item(api, items[i]!);
      size += item.length + 1;
      if (bound !== undefined && size > bound.maxBytes && i > 0) {
        kept = i;
        break;
      }
      if (i > 0) parts.push(COMMA);
      parts.push(item);
    }
    const [open, close] = listShell(api, kept < items.length ? bound!.cut(kept) : metadata);
    return Buffer.concat([open, ...parts, close]);
  }

  /** table is the JSON of the Table of `items` at `now`, as `eventTable` renders it with `encodeFor` for Object, bounded as `list` is. */
  table(api: EventApi, items: readonly ListedVersion[], options: { now: number; includeObject: IncludeObject; listMeta: ListMeta }, bound?: AnswerBound): Buffer {
    let size = 0;
    let kept = items.length;
    const rows: string[] = [];
    for (let i = 0; i < items.length; i++) {
      const row = this.renderedRow(api, items[i]!, options);
      size += Buffer.byteLength(row) + 1;
      if (bound !== undefined && size > bound.maxBytes && i > 0) {
        kept = i;
        break;
      }
      rows.push(row);
    }
    const shell = JSON.stringify(eventTable([], kept < items.length ? { ...options, listMeta: bound!.cut(kept) } : options));
    return Buffer.from(`${shell.slice(0, -2)}${rows.join(',')}]}`);
  }

  private renderedRow(api: EventApi, v: ListedVersion, options: { now: number; includeObject: IncludeObject }): string {
    const p = this.tableRow(v);
    const first = translateMsSince(p.firstMs, options.now);
    const last = p.lastIsFirst ? first : translateMsSince(p.lastMs, options.now);
    const cells = `{"cells":[${JSON.stringify(last)},${p.middle},${JSON.stringify(first)},${p.tail}],"object":`;
    if (options.includeObject === 'None') return `${cells}null}`;
    if (options.includeObject !== 'Object') return `${cells}{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":${p.metadata}}}`;
    // The object is the list item with the kind and apiVersion a list leaves out, which encodeFor writes first.
    return `${cells}{"kind":"Event","apiVersion":${JSON.stringify(api)},${this.item(api, v).toString('utf8', 1)}}`;
  }

  private item(api: EventApi, v: ListedVersion): Buffer {
    const key = v.resourceVersion * SLOTS + (api === CORE_API ? CORE_ITEM : EVENTS_V1_ITEM);
    const hit = this.get(key);
    if (hit !== undefined) return hit as Buffer;
    this.misses++;
    const bytes = Buffer.from(listItemJson(api, v.object()));
    this.set(key, bytes, bytes.length);
    return bytes;
  }

  private tableRow(v: ListedVersion): TableRowParts {
    const key = v.resourceVersion * SLOTS + TABLE_ROW;
    const hit = this.get(key);
    if (hit !== undefined) return hit as TableRowParts;
    this.misses++;
    const e: CoreEvent = v.object();
    // The cells but the ages do not depend on the clock: rendered at any time, they are the same.
    const [type, reason, object, subobject, source, message, count, name] = eventClockFreeCells(e);
    const seen = eventSeenTimes(e);
    const parts: TableRowParts = {
      firstMs: seen.firstMs,
      lastMs: seen.lastMs,
      lastIsFirst: seen.lastIsFirst,
      middle: JSON.stringify([type, reason, object, subobject, source, message]).slice(1, -1),
      tail: `${count},${JSON.stringify(name)}`,
      metadata: JSON.stringify(e.metadata),
    };
    this.set(key, parts, 2 * (parts.middle.length + parts.tail.length + parts.metadata.length) + 64);
    return parts;
  }

  private get(key: number): Buffer | TableRowParts | undefined {
    return this.entries.get(key)?.value;
  }

  private set(key: number, value: Buffer | TableRowParts, bytes: number): void {
    const size = bytes + ENTRY_OVERHEAD;
    if (size <= this.maxBytes) this.entries.set(key, { value, size });
  }
}

/** AnswerBound bounds a list answer: past `maxBytes` of items it ends short, under the metadata `cut` gives for the items kept. */
export interface AnswerBound {
  maxBytes: number;
  cut: (kept: number) => ListMeta;
}

/** RenderAs says what a list answer reads of each version: its Table row (with includeObject=Object, its list item too), or its list item. */
export type RenderAs = { table: false } | { table: true; includeObject: IncludeObject };
