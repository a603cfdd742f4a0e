// What kevents events prints: kubectl events' table, or the list as JSON, YAML or names. The streams are passed in.
import type { CoreEvent } from '../../../api/index.js';
import { encodeCoreEvent } from '../../../api/index.js';
import { createKubectlEventsPrinter, formatKubectlEvents, formatNameLines, goJsonIndent, goYaml, noEventsMessage, sortKubectlEvents } from '../../../print/index.js';
import type { KubectlEventsPrinter } from '../../../print/index.js';
import { spansClusters } from '../../flags/cluster.js';

/** EventsOutput is `-o`: '' for kubectl events' table. */
export type EventsOutput = '' | 'json' | 'yaml' | 'name';

/** EventsPrint are the options the printer reads. */
export interface EventsPrint {
  output: EventsOutput;
  allNamespaces: boolean;
  noHeaders: boolean;
  /** clusters are the `--cluster` names: a CLUSTER column shows when the events span several. */
  clusters: string[] | undefined;
  /** namespace is the one read, for the message that none was found. */
  namespace: string;
  now: number;
}

/** printEvents prints a listed answer: "No events found" on stderr when empty, else the table or the list in `-o`'s format. */
export function printEvents(events: CoreEvent[], o: EventsPrint, out: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }): void {
  if (events.length === 0) {
    out.stderr.write(noEventsMessage(o.namespace, o.allNamespaces));
    return;
  }
  if (o.output === '') {
    out.stdout.write(formatKubectlEvents(events, { now: o.now, allNamespaces: o.allNamespaces, noHeaders: o.noHeaders, withCluster: spansClusters(o.clusters, events) }));
    return;
  }
  const sorted = sortKubectlEvents(events);
  if (o.output === 'name') {
    out.stdout.write(formatNameLines(sorted));
    return;
  }
  const list = { kind: 'EventList', apiVersion: 'v1', metadata: {}, items: sorted.map((e) => encodeCoreEvent(e)) };
  out.stdout.write(o.output === 'json' ? goJsonIndent(list) : goYaml(list));
}

/** createEventsWatchPrinter prints watched events as rows of one table, as `kubectl events -w` does. */
export function createEventsWatchPrinter(o: Pick<EventsPrint, 'allNamespaces' | 'noHeaders' | 'clusters'>, stdout: NodeJS.WritableStream): KubectlEventsPrinter {
  return createKubectlEventsPrinter({
    allNamespaces: o.allNamespaces,
    noHeaders: o.noHeaders,
    withCluster: spansClusters(o.clusters, []),
    output: (s) => stdout.write(s),
  });
}
