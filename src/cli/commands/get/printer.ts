// What kevents get events prints besides the server's Table (printTableAsKubectl): the watched rows through one
// tabwriter, the objects as JSON, YAML or names, and "No resources found". The streams are passed in.
import type { CoreEvent, Table } from '../../../api/index.js';
import { escapeTerminal } from '../../../api/index.js';
import { createTabWriter, formatNameLines, goJsonIndent, goYaml, KUBECTL_TABWRITER, sortKeysDeep } from '../../../print/index.js';

/** TablePrint are the options of a printed Table. */
export interface TablePrint {
  wide: boolean;
  noHeaders: boolean;
  withNamespace: boolean;
  withCluster: boolean;
}

/** noResources is kubectl get's message for an empty list; `listNamespace` is undefined with `-A`. */
export function noResources(listNamespace: string | undefined): string {
  return listNamespace === undefined ? 'No resources found\n' : `No resources found in ${listNamespace} namespace.\n`;
}

/** printObjects prints one event, or a list of them, as `-o json`, `-o yaml` or `-o name` do. */
export function printObjects(events: CoreEvent | CoreEvent[], output: 'json' | 'yaml' | 'name', stdout: NodeJS.WritableStream): void {
  const render = (v: unknown): string => (output === 'json' ? goJsonIndent(sortKeysDeep(v)) : goYaml(v));
  if (!Array.isArray(events)) {
    stdout.write(output === 'name' ? formatNameLines([events]) : render(events));
    return;
  }
  if (output === 'name') {
    stdout.write(formatNameLines(events));
    return;
  }
  stdout.write(render({ apiVersion: 'v1', items: events.map((e) => ({ ...e, apiVersion: e.apiVersion ?? 'v1', kind: e.kind ?? 'Event' })), kind: 'List', metadata: { resourceVersion: '' } }));
}

const CELL_BREAK = /[\f\n\r]/;

/** tableCells are the visible cells of a Table row as kubectl prints them (before 1.37). */
function tableCells(table: Table, row: Table['rows'][number], o: { wide: boolean; withNamespace: boolean }): string[] {
  const out: string[] = [];
  if (o.withNamespace) {
    const ns = (row.object as { metadata?: { namespace?: string } } | null)?.metadata?.namespace;
    out.push(typeof ns === 'string' ? ns : '');
  }
  table.columnDefinitions.forEach((col, i) => {
    if (!o.wide && col.priority !== 0) return;
    const c = row.cells[i];
    if (c === null || c === undefined) return out.push('');
    const raw = typeof c === 'string' ? c : typeof c === 'number' && Number.isInteger(c) ? c.toFixed(0) : JSON.stringify(c);
    const brk = typeof c === 'string' ? raw.search(CELL_BREAK) : -1;
    out.push(brk >= 0 ? `${escapeTerminal(raw.slice(0, brk))}...` : escapeTerminal(raw));
  });
  return out;
}

/** TableWatchPrinter prints Tables as rows of one table. */
export interface TableWatchPrinter {
  /** print writes the header before the first rows, then each row, aligned with those before it. */
  print(t: Table): void;
}

/** createTableWatchPrinter prints through one tabwriter that remembers widths, as `kubectl get -w` does. */
export function createTableWatchPrinter(o: TablePrint, stdout: NodeJS.WritableStream): TableWatchPrinter {
  const w = createTabWriter(KUBECTL_TABWRITER, (s) => stdout.write(s));
  let headerDone = o.noHeaders;
  return {
    print(t) {
      if (!headerDone) {
        const header = [...(o.withNamespace ? ['NAMESPACE'] : []), ...t.columnDefinitions.filter((d) => o.wide || d.priority === 0).map((d) => d.name.toUpperCase())];
        w.write(`${header.join('\t')}\n`);
        headerDone = true;
      }
      for (const r of t.rows) w.write(`${tableCells(t, r, o).join('\t')}\n`);
      w.flush();
    },
  };
}
