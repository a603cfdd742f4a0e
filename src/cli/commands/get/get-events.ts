// kevents get events, laid out as kubectl's commands are: flags → options → validate → run; printer.ts prints.
import type { CoreEvent, Status, Table } from '../../../api/index.js';
import { isStatusError, StatusError } from '../../../api/index.js';
import { printTableAsKubectl } from '../../../print/index.js';
import { CliError, UsageError } from '../../errors.js';
import { clusterSelector, spansClusters, tableEvents, withClusterColumn } from '../../flags/cluster.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import type { ReadConnection } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import type { GetEventsFlags } from './flags.js';
import { CHUNK_SIZE, listAllEvents } from '../../read/list-events.js';
import { selfCommand } from '../../self-command.js';
import { createTableWatchPrinter, noResources, printObjects } from './printer.js';
import type { TablePrint } from './printer.js';

/** GetEventsOptions are the checked flags and arguments. */
export interface GetEventsOptions {
  names: string[];
  output: 'table' | 'wide' | 'json' | 'yaml' | 'name';
  /** limit is the page size of lists (`--chunk-size`; 0: one page). */
  limit: number;
  fieldSelector: string | undefined;
  /** labelSelector is `-l` with the `--cluster` names. */
  labelSelector: string | undefined;
  clusters: string[] | undefined;
  noHeaders: boolean;
  watch: boolean;
  watchOnly: boolean;
}

const EVENT_RESOURCES = new Set(['events', 'event', 'ev', 'events.v1.', 'events.v1', 'events.events.k8s.io', 'events.v1.events.k8s.io', 'event.events.k8s.io', 'ev.events.k8s.io']);

function chunkSize(flags: GetEventsFlags): number {
  if (flags.chunkSize === undefined) return CHUNK_SIZE;
  const n = Number(flags.chunkSize);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`invalid argument "${flags.chunkSize}" for "--chunk-size" flag: strconv.ParseInt: parsing "${flags.chunkSize}": invalid syntax`);
  return n;
}

function parseOutput(output: string | undefined): GetEventsOptions['output'] {
  if (output === undefined || output === '') return 'table';
  if (output === 'wide' || output === 'json' || output === 'yaml' || output === 'name') return output;
  throw new UsageError(`unable to match a printer suitable for the output format "${output}", allowed formats are: json,name,wide,yaml`);
}

/** getEventsOptions checks the resource, the names and the flags, in kubectl get's order, before anything is read. */
export function getEventsOptions(resource: string, names: string[], flags: GetEventsFlags): GetEventsOptions {
  if (!EVENT_RESOURCES.has(resource.toLowerCase())) {
    throw new CliError(`the server doesn't have a resource type "${resource}": kevents reads events only, so run "${selfCommand()} get events" (or "kubectl get ${resource}" for other resources)`);
  }
  const output = parseOutput(flags.output);
  const limit = chunkSize(flags);
  const labelSelector = clusterSelector(flags.cluster, flags.selector);
  if (flags.allNamespaces && names.length > 0) throw new UsageError('a resource cannot be retrieved by name across all namespaces');
  return {
    names,
    output,
    limit,
    fieldSelector: flags.fieldSelector,
    labelSelector,
    clusters: flags.cluster,
    noHeaders: flags.noHeaders === true,
    watch: flags.watch === true,
    watchOnly: flags.watchOnly === true,
  };
}

/** listAllTables reads every page of a Table list and joins the rows, as kubectl's chunked get does. */
async function listAllTables(c: ReadConnection, o: GetEventsOptions): Promise<Table> {
  let table: Table | undefined;
  let next: string | undefined;
  do {
    const page = await c.client.listTable({
      ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}),
      ...(o.fieldSelector ? { fieldSelector: o.fieldSelector } : {}),
      ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
      ...(o.limit > 0 ? { limit: o.limit } : {}),
      ...(next !== undefined ? { continue: next } : {}),
    });
    if (table === undefined) table = page;
    else table.rows.push(...page.rows);
    next = page.metadata?.continue || undefined;
    if (table !== page && page.metadata?.resourceVersion) table.metadata = { ...table.metadata, resourceVersion: page.metadata.resourceVersion };
  } while (next !== undefined);
  return table;
}

/** runGetEvents is `kevents get events [NAME...]`: kubectl get's output over the server's Table. */
export async function runGetEvents(resource: string, names: string[], flags: GetEventsFlags, io: CliIO): Promise<void> {
  const o = getEventsOptions(resource, names, flags);
  const c = await connectRead(flags, io);
  try {
    if (o.output === 'json' || o.output === 'yaml' || o.output === 'name') return await getObjects(c, o, o.output, io);
    const printOptions = { wide: o.output === 'wide', noHeaders: o.noHeaders, withNamespace: c.listNamespace === undefined };
    if (o.names.length > 0) {
      const rows: Table['rows'] = [];
      let table: Table | undefined;
      const errors: string[] = [];
      for (const name of o.names) {
        try {
          const t = await c.client.listTable({ namespace: c.namespace, name });
          table ??= t;
          if (t !== table) table.rows.push(...t.rows);
          else rows.push(...t.rows);
        } catch (e) {
          if (!isStatusError(e) || o.names.length === 1) throw e;
          errors.push(`Error from server (${e.status.reason ?? 'Unknown'}): ${e.status.message ?? ''}\n`);
        }
      }
      if (table !== undefined) io.stdout.write(printTableAsKubectl(table, printOptions));
      for (const err of errors) io.stderr.write(err);
      if (errors.length > 0) throw new CliError(`${errors.length} of ${o.names.length} events were not found`);
      return;
    }
    if (o.watchOnly) return await watchTables(c, o, io, undefined, { ...printOptions, withCluster: spansClusters(o.clusters, []) });
    const listed = await listAllTables(c, o);
    const withCluster = spansClusters(o.clusters, tableEvents(listed));
    const table = withCluster ? withClusterColumn(listed) : listed;
    if (table.rows.length === 0 && !o.watch) {
      io.stderr.write(noResources(c.listNamespace));
      return;
    }
    if (!o.watch) {
      io.stdout.write(printTableAsKubectl(table, printOptions));
      return;
    }
    await watchTables(c, o, io, table, { ...printOptions, withCluster });
  } catch (e) {
    throw explainTransport(e, c);
  }
}

/** getObjects reads the named events, or lists them, for `-o json`, `-o yaml` and `-o name`. */
async function getObjects(c: ReadConnection, o: GetEventsOptions, output: 'json' | 'yaml' | 'name', io: CliIO): Promise<void> {
  if (o.names.length === 1) {
    printObjects(await c.client.coreV1.get(c.namespace, o.names[0]!), output, io.stdout);
    return;
  }
  let items: CoreEvent[];
  if (o.names.length > 0) {
    items = [];
    for (const n of o.names) items.push(await c.client.coreV1.get(c.namespace, n));
  } else {
    items = (await listAllEvents(c.client, { namespace: c.listNamespace, fieldSelector: o.fieldSelector, labelSelector: o.labelSelector, limit: o.limit })).items;
    // An empty list still prints as an empty List; only -o name reports it like the table does.
    if (items.length === 0 && output === 'name') io.stderr.write(noResources(c.listNamespace));
  }
  printObjects(items, output, io.stdout);
}

/**
 * watchTables prints the list, then each watched change as one more row, as
 * `kubectl get -w` does. It runs until the server ends the watch or the process
 * is interrupted.
 */
async function watchTables(c: ReadConnection, o: GetEventsOptions, io: CliIO, initial: Table | undefined, p: TablePrint): Promise<void> {
  const printer = createTableWatchPrinter(p, io.stdout);
  if (initial !== undefined && initial.rows.length > 0) printer.print(initial);
  const resourceVersion = initial?.metadata?.resourceVersion;
  for await (const frame of c.client.watchTable({
    ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}),
    ...(o.fieldSelector ? { fieldSelector: o.fieldSelector } : {}),
    ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
  })) {
    if (frame.type === 'ERROR') throw new StatusError(frame.object as Status);
    if (frame.type === 'BOOKMARK') continue;
    printer.print(p.withCluster ? withClusterColumn(frame.object as Table) : (frame.object as Table));
  }
}
