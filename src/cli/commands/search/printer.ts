import { eventCluster, eventCount, eventLastMs, escapeTerminalLine, goTrimSpace, translateMsSince } from '../../../api/index.js';
import { createTabWriter, KUBECTL_TABWRITER } from '../../../api/index.js';
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
  /** words are the query's words to mark in the message (lowercased); `mark` wraps one (a terminal's bold), or nothing is marked. */
  words?: ReadonlySet<string>;
  mark?: (word: string) => string;
}

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * markWords wraps each word of `text` that the query searched for. `text` is
 * already escaped to one line, and the marks are the only control sequences added;
 * MESSAGE is the last column, so the widths the tabwriter counts stay true.
 */
function markWords(text: string, words: ReadonlySet<string> | undefined, mark: ((w: string) => string) | undefined): string {
  if (words === undefined || mark === undefined || words.size === 0) return text;
  return text.replace(WORD, (w) => (words.has(w.toLowerCase()) ? mark(w) : w));
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
  return [
    translateMsSince(eventLastMs(e), o.now),
    ...(o.withCluster ? [escapeTerminalLine(eventCluster(e))] : []),
    ...(o.allNamespaces ? [escapeTerminalLine(e.metadata.namespace ?? '')] : []),
    ...(o.wide ? [escapeTerminalLine(e.type ?? '')] : []),
    `${escapeTerminalLine((e.involvedObject.kind ?? '').toLowerCase())}/${escapeTerminalLine(e.involvedObject.name ?? '')}`,
    escapeTerminalLine(e.reason ?? ''),
    String(eventCount(e)),
    ...(o.wide
      ? [escapeTerminalLine(e.source?.host || e.reportingInstance || ''), escapeTerminalLine(e.reportingComponent || e.source?.component || ''), item.matched.map(escapeTerminalLine).join(',')]
      : []),
    markWords(escapeTerminalLine(goTrimSpace(e.message ?? '')), o.words, o.mark),
  ];
}

/** formatSearchTable prints hits as `kevents search` does, newest first (the server's order), under a header, aligned as kubectl aligns. */
export function formatSearchTable(items: readonly SearchResultItem[], o: SearchTableOptions): string {
  let out = '';
  const w = createTabWriter(KUBECTL_TABWRITER, (s) => (out += s));
  if (!o.noHeaders) w.write(`${header(o).join('\t')}\n`);
  for (const item of items) w.write(`${row(item, o).join('\t')}\n`);
  w.flush();
  return out;
}
