// The command table: every subcommand's flags, each command's code imported only when it runs. Only the shell
// (run.ts) loads this file; no command imports it, so the defaults the commands share live below them in flags/.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import type { ArchiveStatsFlags } from './commands/archive/stats.js';
import type { ExportFlags } from './commands/export/export.js';
import type { KubeconfigFlags } from './commands/kubeconfig/kubeconfig.js';
import type { LabDirFlags, LabUpFlags } from './commands/lab/lab.js';
import type { MirrorFlags } from './commands/mirror/mirror.js';
import type { RecordFlags } from './commands/record/record.js';
import type { CliIO } from './io.js';
import type { ServeFlags } from './commands/serve/serve.js';
import { addArchiveStatsFlags } from './commands/archive/flags.js';
import { addExportFlags } from './commands/export/flags.js';
import { addKubeconfigFlags } from './commands/kubeconfig/flags.js';
import { addLabUpFlags, withLabDir } from './commands/lab/flags.js';
import { addMirrorFlags } from './commands/mirror/flags.js';
import { addRecordFlags } from './commands/record/flags.js';
import { addServeFlags } from './commands/serve/flags.js';
import { SEARCH_HELP } from './commands/search/help.js';
import { collect } from './flags/collect.js';
import { requireCjs } from '../internal/index.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** register adds every kevents subcommand to the program; each loads its code only when run. */
export function register(program: Command, io: CliIO): void {
  addServeFlags(
    program
      .command('serve')
      .description('run a Kubernetes-compatible events API server (kubectl, client-go and the official clients accept it)'),
  ).action(async (flags: ServeFlags) => {
    const { runServe } = await import('./commands/serve/serve.js');
    await runServe(flags, io);
  });

  addMirrorFlags(
    program
      .command('mirror')
      .description('archive every event of a cluster, losslessly, with each repeat kept as an occurrence'),
  ).action(async (flags: MirrorFlags) => {
    const { runMirror } = await import('./commands/mirror/mirror.js');
    await runMirror(flags, io);
  });

  addExportFlags(
    program
      .command('export')
      .description("deliver an archive's events to Kafka, OpenSearch/Elasticsearch, Loki, OTLP (OpenTelemetry), NATS JetStream, Alertmanager, Slack, webhooks or JSON lines, per sink as upserts, occurrences or alerts (docs/export.md)"),
  ).action(async (flags: ExportFlags) => {
    const { runExport } = await import('./commands/export/export.js');
    await runExport(flags, io);
  });

  addKubeconfigFlags(
    program
      .command('kubeconfig')
      .description('print a kubeconfig that points kubectl at a running kevents server'),
    io,
  ).action(async (flags: KubeconfigFlags) => {
    const { runKubeconfig } = await import('./commands/kubeconfig/kubeconfig.js');
    await runKubeconfig(flags, io);
  });

  addRecordFlags(
    program
      .command('record')
      .description('record one event about an object, through the recorder (for scripts and CI jobs)'),
  ).action(async (flags: RecordFlags) => {
    const { runRecord } = await import('./commands/record/record.js');
    await runRecord(flags, io);
  });

  const archive = program.command('archive').description("inspect an archive's storage");
  addArchiveStatsFlags(
    archive
      .command('stats')
      .description("what an archive takes on disk, by table and index, per event and per occurrence, and what a retention would free"),
  ).action(async (flags: ArchiveStatsFlags) => {
    const { runArchiveStats } = await import('./commands/archive/stats.js');
    await runArchiveStats(flags, io);
  });

  registerReadCommands(program, io);
  registerLabCommands(program, io);
}

function withConnection(c: Command, io: CliIO): Command {
  return c
    .option('--server <url>', 'API server or kevents archive URL (no kubeconfig needed), like kubectl --server', io.env.KEVENTS_SERVER)
    .option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context');
}

/** registerReadCommands adds the commands that read events: get events, events, timeline, incidents, search and lint. */
function registerReadCommands(program: Command, io: CliIO): void {
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

/** registerLabCommands adds `kevents lab`: the events course on a local control plane, with checked exercises. */
function registerLabCommands(program: Command, io: CliIO): void {
  const lab = program
    .command('lab')
    .description('the events lab: a local control plane (real kube-apiserver and scheduler, kwok nodes) with checked exercises');
  addLabUpFlags(
    lab
      .command('up')
      .description('start the lab: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok nodes and a kevents archive, on 127.0.0.1; with --kubelet a real node too'),
  ).action(async (flags: LabUpFlags) => {
    const { runLabUp } = await import('./commands/lab/lab.js');
    await runLabUp(flags, io);
  });
  withLabDir(lab.command('down').description('stop every program of the lab, the real node\'s containers, mounts and cgroups included, and remove its directory (certificates, logs, etcd data, archive)')).action(async (flags: LabDirFlags) => {
    const { runLabDown } = await import('./commands/lab/lab.js');
    await runLabDown(flags, io);
  });
  withLabDir(lab.command('env').description('print the exports that point kubectl at the lab (KUBECONFIG) and kevents at its archive (KEVENTS_SERVER): eval "$(kevents lab env)"')).action(async (flags: LabDirFlags) => {
    const { runLabEnv } = await import('./commands/lab/lab.js');
    runLabEnv(flags, io);
  });
  withLabDir(lab.command('exercises').description('list the exercises of the course (exercise 6 reads the real node\'s kubelet in a lab started with --kubelet)')).action(async (flags: LabDirFlags) => {
    const { runLabExercises } = await import('./commands/lab/lab.js');
    runLabExercises(flags, io);
  });
  withLabDir(lab.command('exercise').description('print one exercise: the task, the commands to try and what you should see').argument('<N>', 'the exercise number')).action(async (n: string, flags: LabDirFlags) => {
    const { runLabExercise } = await import('./commands/lab/lab.js');
    runLabExercise(n, flags, io);
  });
  withLabDir(lab.command('check').description("read the lab's events and say what of an exercise is done and what is missing (exit 1 until it is done)").argument('<N>', 'the exercise number')).action(async (n: string, flags: LabDirFlags) => {
    const { runLabCheck } = await import('./commands/lab/lab.js');
    await runLabCheck(n, flags, io);
  });
  withLabDir(lab.command('status').description('the lab\'s addresses and programs, running or not')).action(async (flags: LabDirFlags) => {
    const { runLabStatus } = await import('./commands/lab/lab.js');
    runLabStatus(flags, io);
  });
}
