// What kevents incidents prints: the incidents in `-o`'s format. The streams are passed in.
import type { IncidentList } from '../../../api/index.js';
import { formatIncidents } from '../../../print/index.js';
import type { IncidentFormat } from '../../../print/index.js';
import type { CliIO } from '../../io.js';

/** IncidentsPrint are what the printer needs of the query. */
export interface IncidentsPrint {
  format: IncidentFormat;
  /** listNamespace is the namespace read, undefined for all. */
  listNamespace: string | undefined;
}

/** printIncidents writes the incidents to stdout, and to stderr how many older ones the server's answer left out. */
export function printIncidents(list: IncidentList, o: IncidentsPrint, io: CliIO): void {
  io.stdout.write(formatIncidents(list, { format: o.format, now: Date.now(), showNamespace: o.listNamespace === undefined, namespace: o.listNamespace }));
  // The server bounds its answer in bytes (--max-answer-bytes): a list it ended short says so, here as in the JSON.
  const left = list.incidentsLeftOut ?? 0;
  if (left > 0) io.stderr.write(`${left} older incident${left === 1 ? '' : 's'} left out of the server's answer (past its --max-answer-bytes): narrow the window or the namespace to see ${left === 1 ? 'it' : 'them'}\n`);
}
