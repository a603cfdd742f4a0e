// The read commands' table (get events, events, timeline, incidents, search, lint): the whole of `kubectl kevents`,
// which reads through a cluster or a server and so carries no storage, server or lab code (its krew bundle is one file
// with no native module), and the part of `kevents` that reads. Each command's code is imported only when it runs.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import type { CliIO } from './io.js';
import { SEARCH_HELP } from './commands/search/help.js';
import { collect } from './flags/collect.js';
import { requireCjs } from '../internal/index.js';

const { Option } = requireCjs('commander') as typeof Commander;

function withConnection(c: Command, io: CliIO): Command {
  return c
    .option('--server <url>', 'API server or kevents archive URL (no kubeconfig needed), like kubectl --server', io.env.KEVENTS_SERVER)
    .option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context');
}

/** registerReadCommands adds the commands that read events: get events, events, timeline, incidents, search and lint. */
export function registerReadCommands(program: Command, io: CliIO): void {
  withConnection(
    program
      .command('get')
      .description('list events as kubectl get events prints them (from any API server or kevents archive)')
      .argument('<resource>', 'events (or ev)')
      .argument('[names...]', 'event names')
      .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
      .option('-A, --all-namespaces', 'list events of every namespace')
      .option('-w, --watch', 'after listing, watch for changes')
      .option('--watch-only', 'watch for changes without listing first')
      .option('--field-selector <selector>', 'e.g. involvedObject.name=web-1,type=Warning')
      .option('-l, --selector <selector>', 'label selector')
      .option('--cluster <name>', 'only events archived from this cluster (repeat for several; a CLUSTER column shows when the answer spans several)', collect)
      .option('-o, --output <format>', 'wide, json, yaml or name')
      .option('--no-headers', 'print no header row')
      .option('--chunk-size <n>', 'list in pages of this size (0: one page)', '500'),
    io,
  ).action(async (resource: string, names: string[], flags: Record<string, unknown>) => {
    const { runGetEvents } = await import('./commands/get/get-events.js');
    await runGetEvents(resource, names, { ...flags, noHeaders: flags.headers === false }, io);
  });

  withConnection(
    program
      .command('events')
      .description('list events as kubectl events prints them: sorted by last seen, with --for and --types')
      .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
      .option('-A, --all-namespaces', 'list events of every namespace')
      .option('--for <kind/name>', 'only events about this object, e.g. pod/web-1')
      .option('--types <types>', 'only events of these types: Normal, Warning (repeat or separate with commas)', collect)
      .option('--cluster <name>', 'only events archived from this cluster (repeat for several; a CLUSTER column shows when the answer spans several)', collect)
      .option('-w, --watch', 'watch for new events after listing')
      .option('-o, --output <format>', 'json, yaml or name')
      .option('--no-headers', 'print no header row')
      .option('--chunk-size <n>', 'accepted for kubectl compatibility; lists always read 500 a page', '500'),
    io,
  ).action(async (flags: Record<string, unknown>) => {
    const { runEvents } = await import('./commands/events/events.js');
    await runEvents({ ...flags, noHeaders: flags.headers === false }, io);
  });

  withConnection(
    program
      .command('timeline')
      .description('an incident timeline: one row per occurrence, in time order, with a summary and next steps')
      .option('--for <kind/name>', 'the object, with what it owns (Deployment → ReplicaSets → Pods) and its pods\' nodes')
      .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
      .option('-A, --all-namespaces', 'every namespace')
      .option('--since <duration>', 'only the last duration, e.g. 2h or 30m')
      .option('--since-time <time>', 'only from this RFC 3339 time')
      .option('--until <time>', 'only before this RFC 3339 time')
      .option('--types <types>', 'only these types: Normal, Warning (repeat or separate with commas)', collect)
      .option('--cluster <name>', 'only what was archived from this cluster (repeat for several)', collect)
      .option('--no-archive', 'read events only: spread repeats from their counts even where the archive keeps occurrences')
      .option('--expand', 'the table: one row per occurrence, rather than one per run of an event\'s repeats (x14 over 28m)')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'markdown', 'csv', 'json']).default('table')),
    io,
  ).action(async (flags: Record<string, unknown>) => {
    const { runTimeline } = await import('./commands/timeline/timeline.js');
    await runTimeline(flags, io);
  });

  withConnection(
    program
      .command('incidents')
      .description('what is broken, since when and why: one line per incident (its root object and cause), most recent first')
      .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
      .option('-A, --all-namespaces', 'every namespace')
      .option('--since <duration>', 'only the last duration, e.g. 24h or 30m')
      .option('--since-time <time>', 'only from this RFC 3339 time')
      .option('--until <time>', 'only before this RFC 3339 time')
      .option('--look-back <duration>', 'how long before the window to read the archive for causes, owners and starts of the incidents active in it (0 to 7d)', '24h')
      .option('--cluster <name>', 'only what was archived from this cluster (repeat for several)', collect)
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'markdown']).default('table')),
    io,
  ).action(async (flags: Record<string, unknown>) => {
    const { runIncidents } = await import('./commands/incidents/incidents.js');
    await runIncidents(flags, io);
  });

  withConnection(
    program
      .command('search')
      .description('search the archive: words, "phrases", -exclusions and fields such as reason:, name:web-*, node: (docs/search.md), newest first')
      .argument('<query...>', 'the query (its words are joined with spaces; quote phrases for the shell, e.g. \'"x509: certificate has expired"\')')
      .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
      .option('-A, --all-namespaces', 'every namespace')
      .option('--since <duration>', 'only events that last happened in the last duration, e.g. 7d or 2h')
      .option('--since-time <time>', 'only events that last happened from this RFC 3339 time')
      .option('--until <time>', 'only events that last happened before this RFC 3339 time')
      .option('--cluster <name>', 'only events archived from this cluster', collect)
      .option('--limit <n>', 'print at most this many hits, newest first (0: all)', '100')
      .option('--chunk-size <n>', 'read in pages of this size', '500')
      .option('--no-headers', 'print no header row')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'wide', 'json', 'yaml']).default('table'))
      .addHelpText('after', SEARCH_HELP),
    io,
  ).action(async (query: string[], flags: Record<string, unknown>) => {
    const { runSearch } = await import('./commands/search/search.js');
    await runSearch(query, { ...flags, noHeaders: flags.headers === false }, io);
  });

  withConnection(
    program
      .command('lint')
      .description('events that break the conventions (reason case, types, messages, reporting controller), with counts')
      .option('-n, --namespace <ns>', 'namespace (default: every namespace)')
      .option('-A, --all-namespaces', 'every namespace (the default)')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'))
      .option('--fail-on-findings', 'exit 1 when any event breaks a convention'),
    io,
  ).action(async (flags: Record<string, unknown>) => {
    const { runLint } = await import('./commands/lint/lint.js');
    await runLint({ ...flags, allNamespaces: flags.namespace === undefined }, io);
  });
}

/** register adds the read commands alone: the command table of `kubectl kevents`. */
export function register(program: Command, io: CliIO): void {
  registerReadCommands(program, io);
}
