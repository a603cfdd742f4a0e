import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestTarget } from '../../auth/index.js';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { ARCHIVE_API, cutText, tableColumn, tableRowObject, jsonBytes, keepWithin, newMethodNotAllowed, newPathNotFound, shareOccurrenceMessages, translateTimestampSince } from '../../api/index.js';
import type { Occurrence, OccurrenceList, Table, TableColumnDefinition } from '../../api/index.js';
import type { Clock, Logger } from '../../internal/index.js';
import { isArchiveStore, occurrenceCursor } from '../../storage/index.js';
import type { EventStore, OccurrenceCursor } from '../../storage/index.js';
import { encodeArchiveContinue, parseArchiveListQuery } from './archive-query.js';
import { negotiateOutput, sendJsonStream, sendObject } from '../http/http-io.js';
import { route } from '../http/route.js';
import type { ServerMetrics } from '../http/metrics.js';

/** ArchiveRouteDeps are what the archive API needs from the server. */
export interface ArchiveRouteDeps {
  store: EventStore;
  clock: Clock;
  logger: Logger;
  metrics: ServerMetrics;
  /** maxAnswerBytes bounds an answer's JSON: a page past it ends short with a continue token. */
  maxAnswerBytes: number;
}

function column(name: string, description: string, priority = 0): TableColumnDefinition {
  return tableColumn(name, description, priority, name === 'Name' ? 'name' : '');
}

/** OCCURRENCE_TABLE_COLUMNS are the columns `kubectl get occurrences` prints. */
export const OCCURRENCE_TABLE_COLUMNS: readonly TableColumnDefinition[] = [
  column('Observed', 'When the change was seen.'),
  column('Type', 'Type of the event (Normal, Warning).'),
  column('Reason', 'Reason of the event.'),
  column('Object', 'The object the event is about.'),
  column('Count', 'The event count before and after the change.'),
  column('Message', 'The message of the event after the change.'),
  column('Cluster', 'The mirrored cluster the event came from.', 1),
  column('Name', 'Name of the occurrence: the event name and a sequence number.', 1),
];

/** occurrenceTable renders `items` as a Table: the cells from each occurrence, the object (includeObject=Object) from `objects`, the same occurrences with their texts shared. */
function occurrenceTable(items: readonly Occurrence[], objects: readonly Occurrence[], list: OccurrenceList['metadata'], now: number, includeObject: string | null): Table {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: list,
    columnDefinitions: OCCURRENCE_TABLE_COLUMNS.map((c) => ({ ...c })),
    rows: items.map((o, i) => ({
      cells: [
        translateTimestampSince(o.observedTime, now),
        o.type ?? '',
        o.reason ?? '',
        `${(o.regarding.kind ?? '').toLowerCase()}/${o.regarding.name ?? ''}`,
        `${o.countBefore}->${o.countAfter}`,
        cutText(o.message ?? ''),
        o.cluster ?? '',
        o.metadata.name ?? '',
      ],
      object: tableRowObject(includeObject, objects[i], o.metadata),
    })),
  };
}

/**
 * registerArchiveRoutes serves the archive API (see src/api/occurrence.ts):
 * occurrence lists across or within namespaces, in observed-time order, with
 * `since`/`until`, field selectors and keyset paging, as JSON, YAML or a Table.
 * Over a store without the archive capability the resource is NotFound.
 */
export function registerArchiveRoutes(router: Router<HTTPVersion.V1>, deps: ArchiveRouteDeps): void {
  const base = `/apis/${ARCHIVE_API}`;
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  const serve = route(deps, { resource: 'occurrences', verb: 'LIST', countAs: (m) => (m === 'GET' ? 'LIST' : m) }, (req, res, namespace: string | undefined) =>
    list(req, res, namespace, deps),
  );
  router.on([...methods], `${base}/occurrences`, (req, res) => serve(req, res, undefined));
  router.on([...methods], `${base}/namespaces/:namespace/occurrences`, (req, res, p) => serve(req, res, p.namespace));
}

async function list(req: IncomingMessage, res: ServerResponse, namespace: string | undefined, deps: ArchiveRouteDeps): Promise<void> {
  if (req.method !== 'GET') throw newMethodNotAllowed();
  const { params, watch } = requestTarget(req);
  if (watch) throw newMethodNotAllowed();
  const format = negotiateOutput(req.headers.accept, true);
  const { query } = parseArchiveListQuery(params, namespace);
  const store = deps.store;
  if (!isArchiveStore(store)) throw newPathNotFound();
  const [page, rv] = await Promise.all([store.listOccurrences(query), store.currentResourceVersion()]);
  const metadata: OccurrenceList['metadata'] = { resourceVersion: String(rv) };
  const shared = shareOccurrenceMessages(page.items);
  if (format.kind === 'table') {
    // A Table's rows are bounded as rendered: with includeObject=Object each carries its occurrence.
    const table = occurrenceTable(page.items, shared, metadata, deps.clock.now(), params.get('includeObject'));
    const kept = keepWithin(table.rows.map(jsonBytes), deps.maxAnswerBytes - ENVELOPE_BYTES - jsonBytes(table.columnDefinitions));
    const cursor = kept < shared.length ? occurrenceCursor(shared[kept - 1]!) : page.next;
    if (cursor !== undefined) metadata.continue = encodeArchiveContinue(cursor);
    table.rows = table.rows.slice(0, kept);
    sendObject(res, 200, table, format);
    return;
  }
  const { items, next } = boundedOccurrences(shared, deps.maxAnswerBytes);
  const cursor = next ?? page.next;
  if (cursor !== undefined) metadata.continue = encodeArchiveContinue(cursor);
  const body: OccurrenceList = { kind: 'OccurrenceList', apiVersion: ARCHIVE_API, metadata, items };
  if (format.kind === 'json') await sendJsonStream(res, 200, body, 'items');
  else sendObject(res, 200, body, format);
}

/** ENVELOPE_BYTES is room for an answer's kind, apiVersion and list metadata (a continue token is under 200 bytes). */
const ENVELOPE_BYTES = 1024;

/**
 * boundedOccurrences is a page of occurrences (their texts already shared, `shareOccurrenceMessages`) as an
 * answer carries it: no more items than fit in `maxBytes` (at least one); `next` is where a page cut short goes on.
 */
export function boundedOccurrences(shared: readonly Occurrence[], maxBytes: number): { items: Occurrence[]; next?: OccurrenceCursor } {
  const kept = keepWithin(shared.map(jsonBytes), maxBytes - ENVELOPE_BYTES);
  if (kept === shared.length) return { items: [...shared] };
  return { items: shared.slice(0, kept), next: occurrenceCursor(shared[kept - 1]!) };
}
