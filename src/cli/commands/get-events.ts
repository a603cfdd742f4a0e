import type { CoreEvent, Status, Table } from '../../api/index.js';
import { createTabWriter, escapeTerminal, formatNameLines, isStatusError, KUBECTL_TABWRITER, printTableAsKubectl, StatusError } from '../../api/index.js';
import { createReadClient, namespaceOf } from '../../client/index.js';
import type { ReadClient } from '../../client/index.js';
import { connect, explainTransport } from '../flags/connection.js';
import type { Connection } from '../flags/connection.js';
import { clusterSelector, spansClusters, tableEvents, withClusterColumn } from '../flags/cluster.js';
import { selfCommand } from '../self-command.js';
import { CliError, UsageError } from '../errors.js';
import { goJsonIndent, sortKeysDeep } from '../output/go-json.js';
import { goYaml } from '../output/go-yaml.js';
import type { CliIO } from '../io.js';

/** ReadConnectionFlags are the connection flags of every read command. */
export interface ReadConnectionFlags {
  server?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
}

/** ReadConnection is a read client and the namespace the flags and kubeconfig chose. */
export interface ReadConnection extends Pick<Connection, 'origin' | 'server'> {
  client: ReadClient;
  /** namespace is `-n`, else the context's namespace, else `default`. */
  namespace: string;
  /** listNamespace is what to list: undefined with `-A`. */
  listNamespace: string | undefined;
}

/**
 * connectRead resolves the connection flags (see connect) into a read client
 * and the namespace to read.
 */
export async function connectRead(flags: ReadConnectionFlags, io: CliIO): Promise<ReadConnection> {
  const { kubeConfig, origin, server } = await connect(flags, io.env);
  const namespace = flags.namespace ?? namespaceOf(kubeConfig);
  return { client: createReadClient({ kubeConfig }), namespace, listNamespace: flags.allNamespaces ? undefined : namespace, origin, server };
}

/** CHUNK_SIZE is kubectl's default --chunk-size: lists are read 500 items a page. */
export const CHUNK_SIZE = 500;

/** GetEventsFlags are the flags of `kevents get events`. */
export interface GetEventsFlags extends ReadConnectionFlags {
  output?: string;
  watch?: boolean;
  watchOnly?: boolean;
  fieldSelector?: string;
  selector?: string;
  noHeaders?: boolean;
  chunkSize?: string;
  /** cluster keeps the events archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
}

const EVENT_RESOURCES = new Set(['events', 'event', 'ev', 'events.v1.', 'events.v1', 'events.events.k8s.io', 'events.v1.events.k8s.io', 'event.events.k8s.io', 'ev.events.k8s.io']);

function chunkSize(flags: GetEventsFlags): number {
  if (flags.chunkSize === undefined) return CHUNK_SIZE;
  const n = Number(flags.chunkSize);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`invalid argument "${flags.chunkSize}" for "--chunk-size" flag: strconv.ParseInt: parsing "${flags.chunkSize}": invalid syntax`);
  return n;
}

/** listAllTables reads every page of a Table list and joins the rows, as kubectl's chunked get does. */
async function listAllTables(c: ReadConnection, flags: GetEventsFlags, limit: number): Promise<Table> {
  let table: Table | undefined;
  let next: string | undefined;
  do {
    const page = await c.client.listTable({
      ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}),
      ...(flags.fieldSelector ? { fieldSelector: flags.fieldSelector } : {}),
      ...(labelSelectorOf(flags) !== undefined ? { labelSelector: labelSelectorOf(flags)! } : {}),
      ...(limit > 0 ? { limit } : {}),
      ...(next !== undefined ? { continue: next } : {}),
    });
    if (table === undefined) table = page;
    else table.rows.push(...page.rows);
    next = page.metadata?.continue || undefined;
    if (table !== page && page.metadata?.resourceVersion) table.metadata = { ...table.metadata, resourceVersion: page.metadata.resourceVersion };
  } while (next !== undefined);
  return table;
}

/** listAllEvents reads every page of a core/v1 list. */
export async function listAllEvents(
  client: ReadClient,
  options: { namespace: string | undefined; fieldSelector?: string | undefined; labelSelector?: string | undefined; limit?: number },
  onPage?: (read: number) => void,
): Promise<{ items: CoreEvent[]; resourceVersion: string }> {
  const items: CoreEvent[] = [];
  let next: string | undefined;
  let resourceVersion = '';
  do {
    const page = await client.coreV1.list({
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
      limit: options.limit ?? CHUNK_SIZE,
      ...(next !== undefined ? { continue: next } : {}),
    });
    items.push(...page.items);
    onPage?.(items.length);
    resourceVersion = page.metadata.resourceVersion ?? resourceVersion;
    next = page.metadata.continue || undefined;
  } while (next !== undefined);
  return { items, resourceVersion };
}

/** labelSelectorOf is `-l` with the `--cluster` names. */
function labelSelectorOf(flags: GetEventsFlags): string | undefined {
  return clusterSelector(flags.cluster, flags.selector);
}

function parseOutput(output: string | undefined): 'table' | 'wide' | 'json' | 'yaml' | 'name' {
  if (output === undefined || output === '') return 'table';
  if (output === 'wide' || output === 'json' || output === 'yaml' || output === 'name') return output;
  throw new UsageError(`unable to match a printer suitable for the output format "${output}", allowed formats are: json,name,wide,yaml`);
}

function noResources(c: ReadConnection): string {
  return c.listNamespace === undefined ? 'No resources found\n' : `No resources found in ${c.listNamespace} namespace.\n`;
}

/** runGetEvents is `kevents get events [NAME...]`: kubectl get's output over the server's Table. */
export async function runGetEvents(resource: string, names: string[], flags: GetEventsFlags, io: CliIO): Promise<void> {
  if (!EVENT_RESOURCES.has(resource.toLowerCase())) {
    throw new CliError(`the server doesn't have a resource type "${resource}": kevents reads events only, so run "${selfCommand()} get events" (or "kubectl get ${resource}" for other resources)`);
  }
  const output = parseOutput(flags.output);
  const limit = chunkSize(flags);
  labelSelectorOf(flags);
  if (flags.allNamespaces && names.length > 0) throw new UsageError('a resource cannot be retrieved by name across all namespaces');
  const c = await connectRead(flags, io);
  try {
    if (output === 'json' || output === 'yaml' || output === 'name') return await printObjects(c, names, flags, output, io, limit);
    const wide = output === 'wide';
    const printOptions = { wide, noHeaders: flags.noHeaders === true, withNamespace: c.listNamespace === undefined };
    if (names.length > 0) {
      const rows: Table['rows'] = [];
      let table: Table | undefined;
      const errors: string[] = [];
      for (const name of names) {
        try {
          const t = await c.client.listTable({ namespace: c.namespace, name });
          table ??= t;
          if (t !== table) table.rows.push(...t.rows);
          else rows.push(...t.rows);
        } catch (e) {
          if (!isStatusError(e) || names.length === 1) throw e;
          errors.push(`Error from server (${e.status.reason ?? 'Unknown'}): ${e.status.message ?? ''}\n`);
        }
      }
      if (table !== undefined) io.stdout.write(printTableAsKubectl(table, printOptions));
      for (const err of errors) io.stderr.write(err);
      if (errors.length > 0) throw new CliError(`${errors.length} of ${names.length} events were not found`);
      return;
    }
    if (flags.watchOnly) return await watchTables(c, flags, io, undefined, { ...printOptions, withCluster: spansClusters(flags.cluster, []) });
    const listed = await listAllTables(c, flags, limit);
    const withCluster = spansClusters(flags.cluster, tableEvents(listed));
    const table = withCluster ? withClusterColumn(listed) : listed;
    if (table.rows.length === 0 && !flags.watch) {
      io.stderr.write(noResources(c));
      return;
    }
    if (!flags.watch) {
      io.stdout.write(printTableAsKubectl(table, printOptions));
      return;
    }
    await watchTables(c, flags, io, table, { ...printOptions, withCluster });
  } catch (e) {
    throw explainTransport(e, c);
  }
}

async function printObjects(c: ReadConnection, names: string[], flags: GetEventsFlags, output: 'json' | 'yaml' | 'name', io: CliIO, limit: number): Promise<void> {
  const render = (v: unknown): string => (output === 'json' ? goJsonIndent(sortKeysDeep(v)) : goYaml(v));
  if (names.length === 1) {
    const e = await c.client.coreV1.get(c.namespace, names[0]!);
    io.stdout.write(output === 'name' ? formatNameLines([e]) : render(e));
    return;
  }
  let items: CoreEvent[];
  if (names.length > 0) {
    items = [];
    for (const n of names) items.push(await c.client.coreV1.get(c.namespace, n));
  } else {
    items = (await listAllEvents(c.client, { namespace: c.listNamespace, fieldSelector: flags.fieldSelector, labelSelector: labelSelectorOf(flags), limit })).items;
    // An empty list still prints as an empty List; only -o name reports it like the table does.
    if (items.length === 0 && output === 'name') io.stderr.write(noResources(c));
  }
  if (output === 'name') {
    io.stdout.write(formatNameLines(items));
    return;
  }
  io.stdout.write(render({ apiVersion: 'v1', items: items.map((e) => ({ ...e, apiVersion: e.apiVersion ?? 'v1', kind: e.kind ?? 'Event' })), kind: 'List', metadata: { resourceVersion: '' } }));
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

/**
 * watchTables prints the list, then each watched change as one more row, through
 * one tabwriter that remembers widths, as `kubectl get -w` does. It runs until
 * the server ends the watch or the process is interrupted.
 */
async function watchTables(
  c: ReadConnection,
  flags: GetEventsFlags,
  io: CliIO,
  initial: Table | undefined,
  o: { wide: boolean; noHeaders: boolean; withNamespace: boolean; withCluster: boolean },
): Promise<void> {
  const w = createTabWriter(KUBECTL_TABWRITER, (s) => io.stdout.write(s));
  let headerDone = o.noHeaders;
  const print = (t: Table): void => {
    if (!headerDone) {
      const header = [...(o.withNamespace ? ['NAMESPACE'] : []), ...t.columnDefinitions.filter((d) => o.wide || d.priority === 0).map((d) => d.name.toUpperCase())];
      w.write(`${header.join('\t')}\n`);
      headerDone = true;
    }
    for (const r of t.rows) w.write(`${tableCells(t, r, o).join('\t')}\n`);
    w.flush();
  };
  if (initial !== undefined && initial.rows.length > 0) print(initial);
  const resourceVersion = initial?.metadata?.resourceVersion;
  for await (const frame of c.client.watchTable({
    ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}),
    ...(flags.fieldSelector ? { fieldSelector: flags.fieldSelector } : {}),
    ...(labelSelectorOf(flags) !== undefined ? { labelSelector: labelSelectorOf(flags)! } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
  })) {
    if (frame.type === 'ERROR') throw new StatusError(frame.object as Status);
    if (frame.type === 'BOOKMARK') continue;
    print(o.withCluster ? withClusterColumn(frame.object as Table) : (frame.object as Table));
  }
}
