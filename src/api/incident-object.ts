import { translateTimestampSince } from './duration.js';
import { escapeTerminalLine } from './escape.js';
import type { Incident, IncidentList } from './incident.js';
import { ARCHIVE_API } from './occurrence.js';
import { tableColumn, tableRowObject } from './printers.js';
import type { ListMeta, Table, TableColumnDefinition } from './types.js';

/**
 * The incidents as Kubernetes objects of `archive.kevents.io/v1alpha1`, the list kind the
 * incidents route answers (and so `kubectl get incidents` through the aggregation layer): each
 * item's `status` is an `Incident` of the document `kevents incidents -o json` prints, field for
 * field (read-only, observed state; at the top level its `kind` would clash with the object's),
 * under `apiVersion`, `kind` and `metadata` (its name, its root's namespace, its start); the list
 * keeps the document's `window` and `incidentsLeftOut` beside `items`.
 */

/** IncidentObject is one incident as a Kubernetes object. */
export interface IncidentObject {
  apiVersion: typeof ARCHIVE_API;
  kind: 'Incident';
  metadata: { name: string; namespace?: string; creationTimestamp: string };
  status: Incident;
}

/** IncidentObjectList is the list kind `IncidentList` of the incidents resource. */
export interface IncidentObjectList {
  apiVersion: typeof ARCHIVE_API;
  kind: 'IncidentList';
  metadata: ListMeta;
  window: IncidentList['window'];
  items: IncidentObject[];
  /** incidentsLeftOut counts the oldest incidents an answer's byte bound left out; absent when none were. */
  incidentsLeftOut?: number;
}

/**
 * incidentName names an incident after its root (`deployment.web`, and the cluster first where one
 * is named: `prod.deployment.web`), lower-cased as object names are; a second incident of the same
 * root in one list (another failure kind) gets its kind as a suffix.
 */
function incidentName(i: Incident, taken: Set<string>): string {
  const slash = i.root.indexOf('/');
  const kind = slash < 0 ? '' : i.root.slice(0, slash).toLowerCase();
  const name = slash < 0 ? i.root : i.root.slice(slash + 1);
  let base = [i.cluster ?? '', kind, name].filter((p) => p !== '').join('.');
  if (taken.has(base)) base = `${base}.${i.kind}`;
  let out = base;
  for (let n = 2; taken.has(out); n++) out = `${base}-${n}`;
  taken.add(out);
  return out;
}

/** incidentObjects turns an incidents document into the list kind, the incidents in the document's order. */
export function incidentObjects(list: IncidentList): IncidentObjectList {
  const taken = new Set<string>();
  const items = list.incidents.map((i): IncidentObject => ({
    apiVersion: ARCHIVE_API,
    kind: 'Incident',
    metadata: { name: incidentName(i, taken), ...(i.namespace !== '' ? { namespace: i.namespace } : {}), creationTimestamp: i.start.time },
    status: i,
  }));
  const out: IncidentObjectList = { apiVersion: ARCHIVE_API, kind: 'IncidentList', metadata: {}, window: list.window, items };
  if (list.incidentsLeftOut !== undefined) out.incidentsLeftOut = list.incidentsLeftOut;
  return out;
}

/** incidentDocument is the incidents document of a list kind (what the web UI and `kevents incidents -o json` read). */
export function incidentDocument(list: IncidentObjectList): IncidentList {
  const out: IncidentList = {
    window: list.window,
    incidents: list.items.map((i) => i.status),
  };
  if (list.incidentsLeftOut !== undefined) out.incidentsLeftOut = list.incidentsLeftOut;
  return out;
}

/** INCIDENT_TABLE_COLUMNS are the columns `kubectl get incidents` prints (`-o wide` adds those of priority 1). */
export const INCIDENT_TABLE_COLUMNS: readonly TableColumnDefinition[] = [
  tableColumn('Name', 'Name of the incident: its root object, after its cluster.', 0, 'name'),
  tableColumn('Status', 'Ongoing while its failure events are still reported near the window\'s end, else Resolved.'),
  tableColumn('Since', 'How long ago the incident began.'),
  tableColumn('Root', 'The highest owner its events reach (Kind/name).'),
  tableColumn('Cause', 'What went wrong, in one sentence built from its events.'),
  tableColumn('Kind', 'The failure kind in the catalogue.', 1),
  tableColumn('Occurrences', 'Occurrences of its failure events in the window.', 1),
  tableColumn('Cluster', 'The mirrored cluster it happened in.', 1),
];

/**
 * incidentTable is the meta.k8s.io Table of an incident list; `includeObject` is the request's
 * parameter (kubectl's default, Metadata, sends each row's metadata: its namespace is what
 * `kubectl get -A` prints as NAMESPACE).
 */
export function incidentTable(list: IncidentObjectList, now: number, includeObject: string | null): Table {
  const row = (o: IncidentObject): Table['rows'][number] => {
    const i = o.status;
    return {
      cells: [
        // kubectl prints cells as they come: what the events named is shown, not obeyed, by a terminal.
        escapeTerminalLine(o.metadata.name),
        i.ongoing ? 'Ongoing' : 'Resolved',
        translateTimestampSince(i.start.time, now),
        escapeTerminalLine(i.root),
        escapeTerminalLine(i.cause),
        i.kind,
        i.occurrences,
        escapeTerminalLine(i.cluster ?? ''),
      ],
      object: tableRowObject(includeObject, o, o.metadata),
    };
  };
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: list.metadata,
    columnDefinitions: INCIDENT_TABLE_COLUMNS.map((c) => ({ ...c })),
    rows: list.items.map(row),
  };
}
