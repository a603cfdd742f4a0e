import type { SearchField, SearchQuery } from '../../../api/index.js';
import { searchFieldValue, searchMarks } from '../../../api/index.js';
import { eventCount, eventLastMs, escapeTerminalLine, goTrimSpace, translateMsSince } from '../../../api/index.js';
import { createTabWriter, KUBECTL_TABWRITER } from '../../../print/index.js';
import type { SearchResultItem } from '../../../api/index.js';

/** SearchTableOptions shape `kevents search`'s table. */
export interface SearchTableOptions {
  /** now is the reader's clock, Unix ms. */
  now: number;
  /** allNamespaces adds the NAMESPACE column (`-A`). */
  allNamespaces: boolean;
  /** withCluster adds the CLUSTER column: the hits span several clusters. */
  withCluster: boolean;
  /** wide adds TYPE, NODE, CONTROLLER and MATCHED. */
  wide: boolean;
  noHeaders: boolean;
  /** query is the search the hits answer; `mark` wraps what it matched (a terminal's bold), or nothing is marked. */
  query?: SearchQuery;
  mark?: (text: string) => string;
}

/** SGR is a terminal's select-graphic-rendition sequence: after escaping, the only ESC in a cell is a mark's. */
const SGR = /\x1b\[[0-9;]*m/g;

/** TABLE counts a cell's width without the marks' sequences, so marked columns stay aligned. */
const TABLE = { ...KUBECTL_TABWRITER, width: (cell: string): number => [...cell.replace(SGR, '')].length };

/**
 * cell shows one field's value on one line, with what the query matched in it
 * marked (`searchMarks`). The value is escaped part by part around the marks,
 * which lie on the value's own words: the marks are the only control sequences
 * in the output, never inside an escape, and an event's own ESC prints as `^[`.
 */
function cell(value: string, field: SearchField, o: SearchTableOptions): string {
  if (o.query === undefined || o.mark === undefined) return escapeTerminalLine(value);
  let out = '';
  let at = 0;
  for (const { start, end } of searchMarks(o.query, field, value)) {
    out += escapeTerminalLine(value.slice(at, start)) + o.mark(escapeTerminalLine(value.slice(start, end)));
    at = end;
  }
  return out + escapeTerminalLine(value.slice(at));
}

function header(o: SearchTableOptions): string[] {
  return [
    'LAST SEEN',
    ...(o.withCluster ? ['CLUSTER'] : []),
    ...(o.allNamespaces ? ['NAMESPACE'] : []),
    ...(o.wide ? ['TYPE'] : []),
    'OBJECT',
    'REASON',
    'COUNT',
    ...(o.wide ? ['NODE', 'CONTROLLER', 'MATCHED'] : []),
    'MESSAGE',
  ];
}

function row(item: SearchResultItem, o: SearchTableOptions): string[] {
  const e = item.event;
  const field = (f: SearchField): string => cell(searchFieldValue(e, f), f, o);
  return [
    translateMsSince(eventLastMs(e), o.now),
    ...(o.withCluster ? [field('cluster')] : []),
    ...(o.allNamespaces ? [field('ns')] : []),
    ...(o.wide ? [field('type')] : []),
    `${cell((e.involvedObject.kind ?? '').toLowerCase(), 'kind', o)}/${field('name')}`,
    field('reason'),
    String(eventCount(e)),
    ...(o.wide ? [field('node'), field('controller'), item.matched.map(escapeTerminalLine).join(',')] : []),
    cell(goTrimSpace(e.message ?? ''), 'message', o),
  ];
}

/** formatSearchTable prints hits as `kevents search` does, newest first (the server's order), under a header, aligned as kubectl aligns. */
export function formatSearchTable(items: readonly SearchResultItem[], o: SearchTableOptions): string {
  let out = '';
  const w = createTabWriter(TABLE, (s) => (out += s));
  if (!o.noHeaders) w.write(`${header(o).join('\t')}\n`);
  for (const item of items) w.write(`${row(item, o).join('\t')}\n`);
  w.flush();
  return out;
}
