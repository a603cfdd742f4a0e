// What kevents incidents prints: the incidents in `-o`'s format. The streams are passed in.
import type { IncidentList } from '../../../api/index.js';
import { formatIncidents } from '../../../diagnosis/index.js';
import type { IncidentFormat } from '../../../diagnosis/index.js';
import type { CliIO } from '../../io.js';

/** IncidentsPrint are what the printer needs of the query. */
export interface IncidentsPrint {
  format: IncidentFormat;
  /** listNamespace is the namespace read, undefined for all. */
  listNamespace: string | undefined;
}

/** printIncidents writes the incidents to stdout. */
export function printIncidents(list: IncidentList, o: IncidentsPrint, io: CliIO): void {
  io.stdout.write(formatIncidents(list, { format: o.format, now: Date.now(), showNamespace: o.listNamespace === undefined, namespace: o.listNamespace }));
}
