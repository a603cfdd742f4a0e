// kevents search, laid out as kubectl's commands are: flags → options → validate → run; printer.ts prints.
import type { SearchQuery } from '../../../api/index.js';
import { isSearchQueryError, parseSearchQuery } from '../../../api/index.js';
import { isDNS1123Label } from '../../../api/index.js';
import type { SearchResult, SearchResultItem } from '../../../api/index.js';
import { UsageError } from '../../errors.js';
import { spansClusters, validateClusterName } from '../../flags/cluster.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import type { SearchFlags } from './flags.js';
import { createColours } from '../../output/colour.js';
import { goJsonIndent, goYaml } from '../../../print/index.js';
import { parseWindow } from '../../read/window.js';
import { formatSearchTable } from './printer.js';

/** SEARCH_FORMATS are the values of `-o`. */
export const SEARCH_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;

/** SearchOptions are the flags validated: the query sent, the window, and how many hits to read in pages of what size. */
interface SearchOptions {
  q: string;
  since?: string;
  until?: string;
  limit: number;
  chunk: number;
  format: (typeof SEARCH_FORMATS)[number];
  /** query is the query parsed, whose matches a terminal shows marked. */
  query: SearchQuery;
}

function count(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`${flag} must be a whole number, not ${JSON.stringify(text)}`);
  return Number(text);
}

/** validateSearch reads the flags into options; a bad query is a usage error naming its position, as the server would. */
export function validateSearch(query: readonly string[], flags: SearchFlags, now: number): SearchOptions {
  const format = (flags.output ?? 'table') as SearchOptions['format'];
  if (!SEARCH_FORMATS.includes(format)) throw new UsageError(`-o must be one of ${SEARCH_FORMATS.join(', ')}`);
  // `kevents search x -ns:kube-system` reads as `-n s:kube-system`: a namespace with a colon is an exclusion gone astray.
  if (flags.namespace !== undefined && isDNS1123Label(flags.namespace).length > 0) {
    throw new UsageError(
      `-n ${JSON.stringify(flags.namespace)} is not a namespace; an exclusion such as -ns:kube-system belongs to the query: quote it ('x509 -ns:kube-system') or put it after -- (kevents search -A -- x509 -ns:kube-system)`,
    );
  }
  const clusters = [...new Set(flags.cluster ?? [])];
  if (clusters.length > 1) throw new UsageError('--cluster may be given once: a search has no "or" (search each cluster in turn)');
  let q = query.join(' ').trim();
  // A cluster name is a label value (checked), so it needs no escape inside the quotes.
  if (clusters.length === 1) q = `${q} cluster:"${validateClusterName(clusters[0]!)}"`.trim();
  let parsed;
  try {
    parsed = parseSearchQuery(q, { nowMs: now });
  } catch (e) {
    if (isSearchQueryError(e)) throw new UsageError(e.message);
    throw e;
  }
  const window = parseWindow(flags, now);
  const o: SearchOptions = { q, limit: count('--limit', flags.limit, 100), chunk: count('--chunk-size', flags.chunkSize, 500), format, query: parsed };
  if (o.chunk === 0) o.chunk = 500;
  if (window.since !== undefined) o.since = new Date(window.since).toISOString();
  if (window.until !== undefined) o.until = new Date(window.until).toISOString();
  return o;
}

/**
 * runSearch is `kevents search QUERY`: the archive's search (docs/search.md),
 * newest first, read in pages of --chunk-size until --limit hits, printed as a
 * table (what the query matched marked on a terminal) or as the served document
 * with every page's items in one `items`.
 */
export async function runSearch(query: readonly string[], flags: SearchFlags, io: CliIO): Promise<void> {
  const o = validateSearch(query, flags, Date.now());
  const c = await connectRead(flags, io);
  const items: SearchResultItem[] = [];
  let first: SearchResult | undefined;
  let next: string | undefined;
  try {
    do {
      const want = o.limit === 0 ? o.chunk : Math.min(o.chunk, o.limit - items.length);
      const page = await c.client.search({
        q: o.q,
        limit: want,
        ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}),
        ...(o.since !== undefined ? { since: o.since } : {}),
        ...(o.until !== undefined ? { until: o.until } : {}),
        ...(next !== undefined ? { continue: next } : {}),
      });
      first ??= page;
      items.push(...page.items.slice(0, o.limit === 0 ? undefined : o.limit - items.length));
      next = page.metadata.continue || undefined;
    } while (next !== undefined && (o.limit === 0 || items.length < o.limit));
  } catch (e) {
    throw explainTransport(e, c);
  }
  if (o.format === 'json' || o.format === 'yaml') {
    const doc: SearchResult = { kind: 'SearchResult', apiVersion: first.apiVersion, metadata: { ...first.metadata }, items };
    delete doc.metadata.continue;
    if (next !== undefined) doc.metadata.continue = next;
    io.stdout.write(o.format === 'json' ? goJsonIndent(doc) : goYaml(doc));
    return;
  }
  if (items.length === 0) {
    io.stderr.write(c.listNamespace === undefined ? 'No events found.\n' : `No events found in ${c.listNamespace} namespace.\n`);
    return;
  }
  const colours = createColours(io.stdout, io.env);
  io.stdout.write(
    formatSearchTable(items, {
      now: Date.now(),
      allNamespaces: c.listNamespace === undefined,
      withCluster: spansClusters(flags.cluster, items.map((i) => i.event)),
      wide: o.format === 'wide',
      noHeaders: flags.noHeaders === true,
      query: o.query,
      ...(colours.enabled ? { mark: (text: string) => colours.bold(text) } : {}),
    }),
  );
  if (next !== undefined) io.stderr.write(`The newest ${items.length} hits are shown; more match (--limit 0 shows them all).\n`);
}
