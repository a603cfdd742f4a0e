// The flags of `kevents export`, apart from export.ts so that the command table can add them without loading the
// exporters: this file imports nothing heavier than commander and the flag defaults.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import { requireCjs } from '../../../internal/index.js';
import { addLeaderElectFlags } from '../../flags/leader-elect.js';
import { DEFAULT_STORAGE } from '../../flags/storage.js';
import { STORAGE_PASSWORD_FILE_FLAG, storagePasswordHelp } from '../../flags/storage-password.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** addExportFlags adds the options of `kevents export` (read into ExportFlags) to its command. */
export function addExportFlags(c: Command): Command {
  const withLease = c
    .option('--config <file>', 'the export config (YAML): sinks, policies, routes; SIGHUP reloads it (needed unless --event-metrics is given)')
    .option('--storage <spec>', `the archive to read: sqlite:PATH or postgres://USER@HOST:PORT/DB[?schema=NAME] (what kevents serve or kevents mirror writes) (default: "${DEFAULT_STORAGE}")`)
    .addOption(new Option('--from <spec>', 'the older name of --storage').hideHelp())
    .option(`${STORAGE_PASSWORD_FILE_FLAG} <path>`, storagePasswordHelp('--storage'))
    .option('--listen <host:port>', 'address of /metrics and /readyz', '127.0.0.1:9465')
    .option('--event-metrics [file]', "count the archive's events written from now on as Prometheus series on /metrics (kevents_events_total); FILE sets labels, rules and the series cap (docs/metrics.md)")
    .option('--leader-elect', "deliver only while this replica holds a lease (for several replicas over one archive): a coordination.k8s.io Lease of the cluster --kubeconfig/--context/--in-cluster names, else a lease in the PostgreSQL archive")
    .option('--kubeconfig <path>', 'with --leader-elect: kubeconfig of the cluster that holds the Lease')
    .option('--context <name>', 'with --leader-elect: kubeconfig context of that cluster')
    .option('--in-cluster', "with --leader-elect: the pod's own cluster holds the Lease (the default in a pod)");
  return addLeaderElectFlags(withLease, {
    leaseName: 'kevents-export',
    stops: 'delivering',
    lease: 'lease',
    namespaceDefault: "the pod's or the kubeconfig context's; kevents in the archive's lease table",
  })
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(['error', 'warn', 'info', 'debug']).default('info'));
}
