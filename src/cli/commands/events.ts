import type { CoreEvent } from '../../api/index.js';
import { createKubectlEventsPrinter, encodeCoreEvent, formatKubectlEvents, formatNameLines, noEventsMessage, sortKubectlEvents, StatusError } from '../../api/index.js';
import type { Status } from '../../api/index.js';
import { ForParseError, parseForArgument } from '../../timeline/index.js';
import { clusterSelector, spansClusters } from '../flags/cluster.js';
import { CliError, UsageError } from '../errors.js';
import { explainTransport } from '../flags/connection.js';
import { connectRead, listAllEvents } from './get-events.js';
import type { ReadConnectionFlags } from './get-events.js';
import { goJsonIndent } from '../output/go-json.js';
import { goYaml } from '../output/go-yaml.js';
import type { CliIO } from '../io.js';

/** EventsFlags are the flags of `kevents events`, kubectl events' own. */
export interface EventsFlags extends ReadConnectionFlags {
  for?: string;
  types?: string[];
  watch?: boolean;
  output?: string;
  noHeaders?: boolean;
  chunkSize?: string;
  /** cluster keeps the events archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
}

/**
 * validateTypes is kubectl events' --types check: values are split on commas,
 * de-duplicated and sorted; each must be Normal or Warning, case-insensitively.
 */
export function validateTypes(values: readonly string[] | undefined): string[] {
  const set = new Set<string>();
  for (const v of values ?? []) for (const t of v.split(',')) if (t !== '') set.add(t);
  const types = [...set].sort();
  for (const t of types) {
    const lower = t.toLowerCase();
    if (lower !== 'normal' && lower !== 'warning') throw new CliError('valid --types are Normal or Warning');
  }
  return types;
}

/** forFieldSelector is the selector kubectl events builds for `--for`: kind, apiVersion and name of the involved object. */
export function forFieldSelector(forArg: string): string {
  const ref = parseForArgument(forArg);
  return `involvedObject.kind=${ref.kind},involvedObject.apiVersion=${ref.apiVersion ?? 'v1'},involvedObject.name=${ref.name}`;
}

function keepTypes(types: readonly string[]): (e: CoreEvent) => boolean {
  if (types.length === 0) return () => true;
  const lower = types.map((t) => t.toLowerCase());
  return (e) => lower.includes((e.type ?? '').toLowerCase());
}

/** runEvents is `kevents events`: kubectl events' output, sorted by last seen, from any server or archive. */
export async function runEvents(flags: EventsFlags, io: CliIO): Promise<void> {
  const types = validateTypes(flags.types);
  const output = flags.output ?? '';
  if (!['', 'json', 'yaml', 'name'].includes(output)) {
    throw new UsageError(`unable to match a printer suitable for the output format "${output}", allowed formats are: json,name,yaml`);
  }
  let fieldSelector: string | undefined;
  try {
    fieldSelector = flags.for === undefined ? undefined : forFieldSelector(flags.for);
  } catch (e) {
    if (e instanceof ForParseError) throw new CliError(e.message);
    throw e;
  }
  const labelSelector = clusterSelector(flags.cluster);
  const c = await connectRead(flags, io);
  const allNamespaces = flags.allNamespaces === true;
  const keep = keepTypes(types);
  try {
    if (flags.watch) {
      const printer = createKubectlEventsPrinter({
        allNamespaces,
        noHeaders: flags.noHeaders === true,
        withCluster: spansClusters(flags.cluster, []),
        output: (s) => io.stdout.write(s),
      });
      for await (const frame of c.client.coreV1.watch({
        ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}),
        ...(fieldSelector ? { fieldSelector } : {}),
        ...(labelSelector !== undefined ? { labelSelector } : {}),
      })) {
        if (frame.type === 'ERROR') throw new StatusError(frame.object as Status);
        if (frame.type === 'DELETED' || frame.type === 'BOOKMARK') continue;
        const e = frame.object as CoreEvent;
        if (!keep(e)) continue;
        printer.print([e], Date.now());
      }
      return;
    }
    const { items } = await listAllEvents(c.client, { namespace: c.listNamespace, fieldSelector, labelSelector });
    const events = items.filter(keep);
    if (events.length === 0) {
      io.stderr.write(noEventsMessage(c.namespace, allNamespaces));
      return;
    }
    if (output === '') {
      io.stdout.write(formatKubectlEvents(events, { now: Date.now(), allNamespaces, noHeaders: flags.noHeaders === true, withCluster: spansClusters(flags.cluster, events) }));
      return;
    }
    const sorted = sortKubectlEvents(events);
    if (output === 'name') {
      io.stdout.write(formatNameLines(sorted));
      return;
    }
    const list = { kind: 'EventList', apiVersion: 'v1', metadata: {}, items: sorted.map((e) => encodeCoreEvent(e)) };
    io.stdout.write(output === 'json' ? goJsonIndent(list) : goYaml(list));
  } catch (e) {
    throw explainTransport(e, c);
  }
}
