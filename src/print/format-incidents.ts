import type { Incident, IncidentList } from '../api/index.js';
import { escapeMarkdown, escapeTerminalLine, markdownCode, translateMsSince, incidentsAnswer } from '../api/index.js';
import { formatTable } from './tabwriter.js';

/** IncidentFormat is an output of `kevents incidents -o`. */
export type IncidentFormat = 'table' | 'json' | 'markdown';

/** INCIDENT_FORMATS are the formats `-o` takes. */
export const INCIDENT_FORMATS: readonly IncidentFormat[] = ['table', 'json', 'markdown'];

/** FormatIncidentsOptions say how to print: the format, the clock for ages, and whether to name namespaces. */
export interface FormatIncidentsOptions {
  format: IncidentFormat;
  now: number;
  /** showNamespace adds a NAMESPACE column (`-A`). */
  showNamespace?: boolean;
  /** namespace names the namespace read, for the empty message. */
  namespace?: string | undefined;
}

function status(i: Incident): string {
  return i.ongoing ? 'ongoing' : 'stopped';
}

/** since is the age of an incident's start, `~` before an estimate. */
function since(i: Incident, now: number): string {
  return `${i.start.estimated ? '~' : ''}${translateMsSince(Date.parse(i.start.time), now)}`;
}

function noneMessage(o: FormatIncidentsOptions): string {
  return o.showNamespace || o.namespace === undefined ? 'No incidents found.\n' : `No incidents found in ${escapeTerminalLine(o.namespace)} namespace.\n`;
}

function formatTableText(list: IncidentList, o: FormatIncidentsOptions): string {
  if (list.incidents.length === 0) return noneMessage(o);
  const clusters = list.incidents.some((i) => i.cluster !== undefined);
  const header = [...(o.showNamespace ? ['NAMESPACE'] : []), ...(clusters ? ['CLUSTER'] : []), 'STATUS', 'SINCE', 'ROOT', 'CAUSE'];
  const rows = list.incidents.map((i) =>
    [...(o.showNamespace ? [i.namespace] : []), ...(clusters ? [i.cluster ?? ''] : []), status(i), since(i, o.now), i.root, i.cause].map(escapeTerminalLine),
  );
  return formatTable([header, ...rows]);
}

function formatMarkdown(list: IncidentList, o: FormatIncidentsOptions): string {
  const out = ['# Incidents', '', `- **Window:** ${list.window.since ?? 'the beginning'} to ${list.window.until ?? 'now'}`, ''];
  if (list.incidents.length === 0) return `${out.join('\n')}${noneMessage(o)}`;
  out.push('| Status | Since | Namespace | Root | Cause |', '|---|---|---|---|---|');
  for (const i of list.incidents) {
    out.push(`| ${status(i)} | ${i.start.estimated ? '~' : ''}${i.start.time} | ${escapeMarkdown(i.namespace)} | ${markdownCode(i.root)} | ${escapeMarkdown(i.cause)} |`);
  }
  out.push('');
  for (const i of list.incidents) {
    if (i.hints.length === 0) continue;
    out.push(`## ${markdownCode(i.root)}${i.namespace === '' ? '' : ` in ${markdownCode(i.namespace)}`}`, '', escapeMarkdown(i.cause), '');
    for (const h of i.hints) out.push(`- ${escapeMarkdown(h.why)}`, '  ```sh', `  ${escapeTerminalLine(h.command)}`, '  ```');
    out.push('');
  }
  return out.join('\n');
}

/**
 * formatIncidents prints incidents: `table`, one line per incident (STATUS,
 * SINCE, ROOT, CAUSE), most recent first; `json`, the document as served;
 * `markdown`, a table and each incident's next steps. Every field from the
 * events is escaped for where it goes.
 */
export function formatIncidents(list: IncidentList, o: FormatIncidentsOptions): string {
  switch (o.format) {
    case 'json':
      // The document as served: each repeated text once (the whole of it: no byte bound on a file of one's own).
      return `${JSON.stringify(incidentsAnswer(list, Infinity), null, 2)}\n`;
    case 'markdown':
      return formatMarkdown(list, o);
    case 'table':
      return formatTableText(list, o);
  }
}
