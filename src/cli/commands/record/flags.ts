// The flags of `kevents record`, apart from record.ts so that the command table can add them without loading the
// recorder and the client.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import { requireCjs } from '../../../internal/index.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** addRecordFlags adds the options of `kevents record` (read into RecordFlags) to its command. */
export function addRecordFlags(c: Command): Command {
  return c
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
    .option('--context <name>', 'kubeconfig context');
}
