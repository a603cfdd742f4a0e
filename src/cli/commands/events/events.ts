// kevents events, laid out as kubectl's pkg/cmd/events: flags → options → validate → run; printer.ts prints.
import type { CoreEvent } from '../../../api/index.js';
import { StatusError } from '../../../api/index.js';
import type { Status } from '../../../api/index.js';
import { ForParseError, parseForArgument } from '../../../timeline/index.js';
import { CliError, UsageError } from '../../errors.js';
import { clusterSelector } from '../../flags/cluster.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import { validateTypes } from '../../flags/types.js';
import type { CliIO } from '../../io.js';
import type { EventsFlags } from './flags.js';
import { listAllEvents } from '../../read/list-events.js';
import { createEventsWatchPrinter, printEvents } from './printer.js';
import type { EventsOutput } from './printer.js';

/** EventsOptions are the checked flags: what to list, and how to print it. */
export interface EventsOptions {
  /** types are the kept types (none: all), sorted, as given. */
  types: string[];
  output: EventsOutput;
  /** fieldSelector selects `--for`'s object. */
  fieldSelector: string | undefined;
  /** labelSelector selects `--cluster`'s clusters. */
  labelSelector: string | undefined;
  clusters: string[] | undefined;
  allNamespaces: boolean;
  noHeaders: boolean;
  watch: boolean;
}

/** forFieldSelector is the selector kubectl events builds for `--for`: kind, apiVersion and name of the involved object. */
export function forFieldSelector(forArg: string): string {
  const ref = parseForArgument(forArg);
  return `involvedObject.kind=${ref.kind},involvedObject.apiVersion=${ref.apiVersion ?? 'v1'},involvedObject.name=${ref.name}`;
}

/** eventsOptions checks the flags, in kubectl events' order, before anything is read. */
export function eventsOptions(flags: EventsFlags): EventsOptions {
  const types = validateTypes(flags.types);
  const output = flags.output ?? '';
  if (output !== '' && output !== 'json' && output !== 'yaml' && output !== 'name') {
    throw new UsageError(`unable to match a printer suitable for the output format "${output}", allowed formats are: json,name,yaml`);
  }
  let fieldSelector: string | undefined;
  try {
    fieldSelector = flags.for === undefined ? undefined : forFieldSelector(flags.for);
  } catch (e) {
    if (e instanceof ForParseError) throw new CliError(e.message);
    throw e;
  }
  return {
    types,
    output,
    fieldSelector,
    labelSelector: clusterSelector(flags.cluster),
    clusters: flags.cluster,
    allNamespaces: flags.allNamespaces === true,
    noHeaders: flags.noHeaders === true,
    watch: flags.watch === true,
  };
}

function keepTypes(types: readonly string[]): (e: CoreEvent) => boolean {
  if (types.length === 0) return () => true;
  const lower = types.map((t) => t.toLowerCase());
  return (e) => lower.includes((e.type ?? '').toLowerCase());
}

/** runEvents is `kevents events`: kubectl events' output, sorted by last seen, from any server or archive. */
export async function runEvents(flags: EventsFlags, io: CliIO): Promise<void> {
  const o = eventsOptions(flags);
  const c = await connectRead(flags, io);
  const keep = keepTypes(o.types);
  try {
    if (o.watch) {
      const printer = createEventsWatchPrinter(o, io.stdout);
      for await (const frame of c.client.coreV1.watch({
        ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}),
        ...(o.fieldSelector ? { fieldSelector: o.fieldSelector } : {}),
        ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
      })) {
        if (frame.type === 'ERROR') throw new StatusError(frame.object as Status);
        if (frame.type === 'DELETED' || frame.type === 'BOOKMARK') continue;
        const e = frame.object as CoreEvent;
        if (!keep(e)) continue;
        printer.print([e], Date.now());
      }
      return;
    }
    const { items } = await listAllEvents(c.client, { namespace: c.listNamespace, fieldSelector: o.fieldSelector, labelSelector: o.labelSelector });
    printEvents(items.filter(keep), { ...o, namespace: c.namespace, now: Date.now() }, io);
  } catch (e) {
    throw explainTransport(e, c);
  }
}
