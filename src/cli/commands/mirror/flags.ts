// The flags of `kevents mirror`, apart from mirror.ts so that the command table can add them without loading the
// mirror: this file imports nothing heavier than commander and the flag defaults.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import { requireCjs } from '../../../internal/index.js';
import { collect } from '../../flags/collect.js';
import { addLeaderElectFlags } from '../../flags/leader-elect.js';
import { MIRROR_CACHE_MIB } from '../../flags/storage.js';
import { STORAGE_PASSWORD_FILE_FLAG, storagePasswordHelp } from '../../flags/storage-password.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** addMirrorFlags adds the options of `kevents mirror` (read into MirrorFlags) to its command. */
export function addMirrorFlags(c: Command): Command {
  const withLease = c
    .option('--kubeconfig <path>', 'kubeconfig of the source cluster (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context of the source cluster')
    .option('--source <url>', 'source API server URL (no kubeconfig needed)')
    .option('--in-cluster', "read the source from the pod's service account (the default in a pod when no other source is given)")
    .option('--storage <spec>', 'the archive: sqlite:PATH, postgres://USER@HOST:PORT/DB or memory: (required)')
    .addOption(new Option('--to <spec>', 'the older name of --storage').hideHelp())
    .option(`${STORAGE_PASSWORD_FILE_FLAG} <path>`, storagePasswordHelp('--storage'))
    .option('--cluster <name>', "the source cluster's name, bound to its kube-system UID in the archive (default: the kubeconfig context's name; required in a pod)")
    .option('--retention <duration>', 'drop archived events and occurrences older than this, e.g. 30d; NAME=DURATION for one cluster (repeatable: --retention 30d --retention prod=90d)', collect)
    .option('--max-size <size>', 'drop the oldest archived data while the archive is larger than this, e.g. 10GB')
    .option('--cache-size <MiB>', "SQLite page cache of the archive, in MiB (a mirror mostly appends, so a small cache keeps memory low)", String(MIRROR_CACHE_MIB))
    .option('--listen <host:port>', 'address of /metrics and /readyz', '127.0.0.1:9464')
    .option('--sinks <file>', 'also deliver the archived events to the sinks of this export config (docs/export.md; with --leader-elect, the leader alone delivers); SIGHUP reloads it')
    .option('--event-metrics [file]', 'count the events archived from now on as Prometheus series on /metrics (kevents_events_total); FILE sets labels, rules and the series cap (docs/metrics.md)')
    .option('--leader-elect', 'run the mirror (and --sinks) only while this replica holds a coordination.k8s.io Lease (for several replicas over one archive)');
  return addLeaderElectFlags(withLease, {
    leaseName: 'kevents-mirror',
    stops: 'mirroring',
    lease: 'Lease',
    namespaceDefault: "the pod's, or the kubeconfig context's",
  })
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(['error', 'warn', 'info', 'debug']).default('info'));
}
