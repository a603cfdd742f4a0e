// The flags of `kevents kubeconfig`, apart from kubeconfig.ts so that the command table can add them without
// loading the command.
import type { Command } from 'commander';
import { DEFAULT_SERVER } from '../../flags/defaults.js';
import type { CliIO } from '../../io.js';

/** addKubeconfigFlags adds the options of `kevents kubeconfig` (read into KubeconfigFlags) to its command; --server defaults to $KEVENTS_SERVER. */
export function addKubeconfigFlags(c: Command, io: CliIO): Command {
  return c
    .option('--server <url>', 'the kevents server', io.env.KEVENTS_SERVER ?? DEFAULT_SERVER)
    .option('-n, --namespace <ns>', 'default namespace of the context', 'default')
    .option('--no-check', 'do not check that the server answers');
}
