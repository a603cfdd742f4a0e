// The command table: every subcommand's flags, each command's code imported only when it runs. Only the shell
// (run.ts) loads this file; no command imports it, so the defaults the commands share live below them in flags/.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import type { ExportFlags } from './commands/export/export.js';
import type { LabDirFlags, LabUpFlags } from './commands/lab.js';
import type { MirrorFlags } from './commands/mirror/mirror.js';
import type { RecordFlags } from './commands/record.js';
import type { CliIO } from './io.js';
import type { ServeFlags } from './commands/serve/serve.js';
import { DEFAULT_SERVER } from './flags/defaults.js';
import { DEFAULT_STORAGE, MIRROR_CACHE_MIB } from './flags/storage.js';
import { requireCjs } from '../internal/index.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** register adds every kevents subcommand to the program; each loads its code only when run. */
export function register(program: Command, io: CliIO): void {
  program
    .command('serve')
    .description('run a Kubernetes-compatible events API server (kubectl, client-go and the official clients accept it)')
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:8080')
    .option('--storage <spec>', 'where events are kept: sqlite:PATH, memory:, postgres://USER@HOST:PORT/DB or etcd://HOST:PORT[,HOST:PORT...]', DEFAULT_STORAGE)
    .option('--event-ttl <duration>', 'how long an event lives after its last write, like kube-apiserver (0 keeps events forever)', '1h')
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(['error', 'warn', 'info', 'debug']).default('info'))
    .option('--mirror <kubeconfig|url|in-cluster>', "also archive every event of this cluster into the store (a kubeconfig file, an API server URL, or in-cluster for the pod's service account)")
    .option('--mirror-context <name>', 'kubeconfig context of --mirror')
    .option('--cluster <name>', 'label what --mirror archives with this cluster name')
    .option('--retention <duration>', 'drop archived events and occurrences older than this, e.g. 30d; NAME=DURATION for one cluster (repeatable: --retention 30d --retention prod=90d)', collect, [])
    .option('--max-size <size>', 'drop the oldest archived data while the store is larger than this, e.g. 10GB')
    .option('--sinks <file>', 'also deliver the store\'s events to the sinks of this export config (docs/export.md); SIGHUP reloads it')
    .option('--event-metrics [file]', 'count the events written from now on as Prometheus series on /metrics (kevents_events_total); FILE sets labels, rules and the series cap (docs/metrics.md)')
    .option('--tls-cert-file <path>', 'serve HTTPS with this PEM certificate (chain); reloaded when the file changes')
    .option('--tls-private-key-file <path>', 'PEM private key of --tls-cert-file')
    .option('--token-auth-file <path>', "bearer tokens in kube-apiserver's CSV format token,user,uid,\"group1,group2\" (groups kevents:readers, kevents:writers); reloaded when it changes")
    .option('--delegate-auth', 'authenticate unknown tokens with the cluster\'s TokenReview and authorize with SubjectAccessReview (in-cluster, or --delegate-auth-kubeconfig)')
    .option('--delegate-auth-kubeconfig <path>', 'kubeconfig of the cluster --delegate-auth asks (default: the in-cluster service account)')
    .option('--insecure-allow-remote', 'listen on a non-loopback address without TLS or authentication')
    .option('--allowed-host <host>', 'without authentication, also answer requests whose Host is this name (a port-forward or proxy); IP addresses, localhost and the --listen host always are (repeatable)', collect, [])
    .option('--read-header-timeout <duration>', "close a connection that has not sent its request's headers in this time, like kube-apiserver", '32s')
    .option('--read-timeout <duration>', 'answer 408 to a request whose body has not arrived in this time (a watch, once asked for, is not cut)', '1m')
    .option('--max-connections <n>', 'close connections beyond this many open at once', '4096')
    .option('--render-cache-size <size>', 'memory for the wire bytes of listed event versions, which later lists reuse (0 keeps none)', '64MiB')
    .option(
      '--workers <n>',
      'processes that answer requests over one SQLite file (auto: one per core); this process then keeps the file and its writes (docs/serve.md: Several processes)',
      '1',
    )
    .option('--writer-thread', 'commit the SQLite file\'s writes on a second thread while the first answers requests: more creates/s where a core is free, a little more CPU per create (docs/serve.md: Several processes)')
    .addOption(new Option('--history-window <duration>', 'how long watch history is kept').hideHelp())
    .action(async (flags: ServeFlags) => {
      const { runServe } = await import('./commands/serve/serve.js');
      await runServe(flags, io);
    });

  program
    .command('mirror')
    .description('archive every event of a cluster, losslessly, with each repeat kept as an occurrence')
    .option('--kubeconfig <path>', 'kubeconfig of the source cluster (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context of the source cluster')
    .option('--source <url>', 'source API server URL (no kubeconfig needed)')
    .option('--in-cluster', "read the source from the pod's service account (the default in a pod when no other source is given)")
    .requiredOption('--to <spec>', 'the archive: sqlite:PATH, postgres://USER@HOST:PORT/DB or memory:')
    .option('--cluster <name>', "the source cluster's name, bound to its kube-system UID in the archive (default: the kubeconfig context's name; required in a pod)")
    .option('--retention <duration>', 'drop archived events and occurrences older than this, e.g. 30d; NAME=DURATION for one cluster (repeatable: --retention 30d --retention prod=90d)', collect, [])
    .option('--max-size <size>', 'drop the oldest archived data while the archive is larger than this, e.g. 10GB')
    .option('--cache-size <MiB>', "SQLite page cache of the archive, in MiB (a mirror mostly appends, so a small cache keeps memory low)", String(MIRROR_CACHE_MIB))
    .option('--listen <host:port>', 'address of /metrics and /readyz', '127.0.0.1:9464')
    .option('--sinks <file>', 'also deliver the archived events to the sinks of this export config (docs/export.md; with --leader-elect, the leader alone delivers); SIGHUP reloads it')
    .option('--event-metrics [file]', 'count the events archived from now on as Prometheus series on /metrics (kevents_events_total); FILE sets labels, rules and the series cap (docs/metrics.md)')
    .option('--leader-elect', 'run the mirror (and --sinks) only while this replica holds a coordination.k8s.io Lease (for several replicas over one archive)')
    .option('--leader-elect-lease-duration <duration>', 'how long standby replicas wait after the last renewal before taking over', '15s')
    .option('--leader-elect-renew-deadline <duration>', 'how long the leader retries a renewal before it stops mirroring', '10s')
    .option('--leader-elect-retry-period <duration>', 'how often replicas try to acquire or renew the Lease', '2s')
    .option('--leader-elect-resource-name <name>', 'name of the Lease', 'kevents-mirror')
    .option('--leader-elect-resource-namespace <ns>', "namespace of the Lease (default: the pod's, or the kubeconfig context's)")
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(['error', 'warn', 'info', 'debug']).default('info'))
    .action(async (flags: MirrorFlags) => {
      const { runMirror } = await import('./commands/mirror/mirror.js');
      await runMirror(flags, io);
    });

  program
    .command('export')
    .description("deliver an archive's events to Kafka, OpenSearch/Elasticsearch, Loki, OTLP (OpenTelemetry), NATS JetStream, Alertmanager, Slack, webhooks or JSON lines, per sink as upserts, occurrences or alerts (docs/export.md)")
    .option('--config <file>', 'the export config (YAML): sinks, policies, routes; SIGHUP reloads it (needed unless --event-metrics is given)')
    .option('--from <spec>', 'the archive to read: sqlite:PATH or postgres://USER@HOST:PORT/DB[?schema=NAME] (what kevents serve or kevents mirror writes)', DEFAULT_STORAGE)
    .option('--listen <host:port>', 'address of /metrics and /readyz', '127.0.0.1:9465')
    .option('--event-metrics [file]', "count the archive's events written from now on as Prometheus series on /metrics (kevents_events_total); FILE sets labels, rules and the series cap (docs/metrics.md)")
    .option('--leader-elect', "deliver only while this replica holds a lease (for several replicas over one archive): a coordination.k8s.io Lease of the cluster --kubeconfig/--context/--in-cluster names, else a lease in the PostgreSQL archive")
    .option('--kubeconfig <path>', 'with --leader-elect: kubeconfig of the cluster that holds the Lease')
    .option('--context <name>', 'with --leader-elect: kubeconfig context of that cluster')
    .option('--in-cluster', "with --leader-elect: the pod's own cluster holds the Lease (the default in a pod)")
    .option('--leader-elect-lease-duration <duration>', 'how long standby replicas wait after the last renewal before taking over', '15s')
    .option('--leader-elect-renew-deadline <duration>', 'how long the leader retries a renewal before it stops delivering', '10s')
    .option('--leader-elect-retry-period <duration>', 'how often replicas try to acquire or renew the lease', '2s')
    .option('--leader-elect-resource-name <name>', 'name of the lease', 'kevents-export')
    .option('--leader-elect-resource-namespace <ns>', "namespace of the lease (default: the pod's or the kubeconfig context's; kevents in the archive's lease table)")
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(['error', 'warn', 'info', 'debug']).default('info'))
    .action(async (flags: ExportFlags) => {
      const { runExport } = await import('./commands/export/export.js');
      await runExport(flags, io);
    });

  program
    .command('kubeconfig')
    .description('print a kubeconfig that points kubectl at a running kevents server')
    .option('--server <url>', 'the kevents server', io.env.KEVENTS_SERVER ?? DEFAULT_SERVER)
    .option('-n, --namespace <ns>', 'default namespace of the context', 'default')
    .option('--no-check', 'do not check that the server answers')
    .action(async (flags: { server: string; namespace: string; check: boolean }) => {
      const { runKubeconfig } = await import('./commands/kubeconfig.js');
      await runKubeconfig(flags, io);
    });

  program
    .command('record')
    .description('record one event about an object, through the recorder (for scripts and CI jobs)')
    .requiredOption('--for <kind/name>', 'the object the event is about, e.g. pod/web-1 or deployment/web')
    .option('-n, --namespace <ns>', 'namespace of the object (default: the context\'s, or default)')
    .addOption(new Option('--type <type>', 'event type').choices(['Normal', 'Warning']).default('Normal'))
    .requiredOption('--reason <Reason>', 'why, in UpperCamelCase (e.g. BackupFailed)')
    .option('--action <Action>', 'what was done or failed (required for events.k8s.io/v1)')
    .option('--message <text>', 'human-readable message (note)', '')
    .option('--reporting-controller <name>', 'who reports it', 'kevents-record')
    .addOption(new Option('--api <groupVersion>', 'which Event API to write').choices(['events.k8s.io/v1', 'v1']).default('events.k8s.io/v1'))
    .option('--object-api-version <v>', 'apiVersion of the object, for kinds kevents does not know (default v1)')
    .option('--uid <uid>', 'uid of the object')
    .option('--server <url>', 'API server URL (no kubeconfig needed), like kubectl --server')
    .option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (flags: RecordFlags) => {
      const { runRecord } = await import('./commands/record.js');
      await runRecord(flags, io);
    });

  registerReadCommands(program, io);
  registerLabCommands(program, io);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
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
      .option('--cluster <name>', 'only events archived from this cluster (repeat for several; a CLUSTER column shows when the answer spans several)', collect, [])
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
      .option('--for <type/name>', 'only events about this object, e.g. pod/web-1')
      .option('--types <types>', 'only events of these types: Normal, Warning (repeat or separate with commas)', collect, [])
      .option('--cluster <name>', 'only events archived from this cluster (repeat for several; a CLUSTER column shows when the answer spans several)', collect, [])
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
      .option('--types <types>', 'only these types: Normal, Warning (repeat or separate with commas)', collect, [])
      .option('--cluster <name>', 'only what was archived from this cluster (repeat for several)', collect, [])
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
      .option('--cluster <name>', 'only what was archived from this cluster (repeat for several)', collect, [])
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
      .option('--cluster <name>', 'only events archived from this cluster', collect, [])
      .option('--limit <n>', 'print at most this many hits, newest first (0: all)', '100')
      .option('--chunk-size <n>', 'read in pages of this size', '500')
      .option('--no-headers', 'print no header row')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'wide', 'json', 'yaml']).default('table')),
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

function withLabDir(c: Command): Command {
  return c.option('--dir <path>', 'the lab\'s state directory (default $KEVENTS_LAB_DIR or ~/.kevents/lab)');
}

/** registerLabCommands adds `kevents lab`: the events course on a local control plane, with checked exercises. */
function registerLabCommands(program: Command, io: CliIO): void {
  const lab = program
    .command('lab')
    .description('the events lab: a local control plane (real kube-apiserver and scheduler, kwok nodes) with checked exercises');
  withLabDir(
    lab
      .command('up')
      .description('start the lab: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok nodes and a kevents archive, on 127.0.0.1')
      .option('--nodes <n>', 'how many kwok nodes', '3')
      .option('--node-cpu <quantity>', 'allocatable CPU of each node', '2')
      .option('--node-memory <quantity>', 'allocatable memory of each node', '4Gi')
      .option('--event-ttl <duration>', 'kube-apiserver --event-ttl: how long the cluster keeps an event after its last write', '1h')
      .option('--bin-dir <path>', 'look for etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok here first')
      .option('--no-build', 'never build missing binaries with go'),
  ).action(async (flags: LabUpFlags) => {
    const { runLabUp } = await import('./commands/lab.js');
    await runLabUp(flags, io);
  });
  withLabDir(lab.command('down').description('stop every program of the lab and remove its directory (certificates, logs, etcd data, archive)')).action(async (flags: LabDirFlags) => {
    const { runLabDown } = await import('./commands/lab.js');
    await runLabDown(flags, io);
  });
  withLabDir(lab.command('env').description('print the exports that point kubectl at the lab (KUBECONFIG) and kevents at its archive (KEVENTS_ARCHIVE): eval "$(kevents lab env)"')).action(async (flags: LabDirFlags) => {
    const { runLabEnv } = await import('./commands/lab.js');
    runLabEnv(flags, io);
  });
  lab.command('exercises').description('list the exercises of the course').action(async () => {
    const { runLabExercises } = await import('./commands/lab.js');
    runLabExercises(io);
  });
  withLabDir(lab.command('exercise').description('print one exercise: the task, the commands to try and what you should see').argument('<N>', 'the exercise number')).action(async (n: string, flags: LabDirFlags) => {
    const { runLabExercise } = await import('./commands/lab.js');
    runLabExercise(n, flags, io);
  });
  withLabDir(lab.command('check').description("read the lab's events and say what of an exercise is done and what is missing (exit 1 until it is done)").argument('<N>', 'the exercise number')).action(async (n: string, flags: LabDirFlags) => {
    const { runLabCheck } = await import('./commands/lab.js');
    await runLabCheck(n, flags, io);
  });
  withLabDir(lab.command('status').description('the lab\'s addresses and programs, running or not')).action(async (flags: LabDirFlags) => {
    const { runLabStatus } = await import('./commands/lab.js');
    runLabStatus(flags, io);
  });
}
