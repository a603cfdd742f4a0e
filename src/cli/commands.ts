import { Option } from 'commander';
import type { Command } from 'commander';
import type { RecordFlags } from './record.js';
import type { CliIO } from './run.js';
import { DEFAULT_STORAGE } from './storage-spec.js';

/** DEFAULT_SERVER is where the client commands look for a kevents server by default. */
export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

/** register adds every kevents subcommand to the program; each loads its code only when run. */
export function register(program: Command, io: CliIO): void {
  program
    .command('serve')
    .description('run a Kubernetes-compatible events API server (kubectl, client-go and the official clients accept it)')
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:8080')
    .option('--storage <spec>', 'where events are kept: sqlite:PATH or memory:', DEFAULT_STORAGE)
    .option('--event-ttl <duration>', 'how long an event lives after its last write, like kube-apiserver (0 keeps events forever)', '1h')
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(['error', 'warn', 'info', 'debug']).default('info'))
    .action(async (flags: { listen: string; storage: string; eventTtl: string; logLevel: string }) => {
      const { runServe } = await import('./serve.js');
      await runServe(flags, io);
    });

  program
    .command('kubeconfig')
    .description('print a kubeconfig that points kubectl at a running kevents server')
    .option('--server <url>', 'the kevents server', io.env.KEVENTS_SERVER ?? DEFAULT_SERVER)
    .option('-n, --namespace <ns>', 'default namespace of the context', 'default')
    .option('--no-check', 'do not check that the server answers')
    .action(async (flags: { server: string; namespace: string; check: boolean }) => {
      const { runKubeconfig } = await import('./kubeconfig.js');
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
      const { runRecord } = await import('./record.js');
      await runRecord(flags, io);
    });
}
