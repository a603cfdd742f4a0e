// The flags of `kevents serve`, apart from serve.ts so that the command table can add them without loading the
// server: this file imports nothing heavier than commander and the flag defaults.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import { requireCjs } from '../../../internal/index.js';
import { collect } from '../../flags/collect.js';
import { DEFAULT_STORAGE } from '../../flags/storage.js';
import { STORAGE_PASSWORD_FILE_FLAG, storagePasswordHelp } from '../../flags/storage-password.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** addServeFlags adds the options of `kevents serve` (read into ServeFlags) to its command. */
export function addServeFlags(c: Command): Command {
  return c
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:8080')
    .option('--storage <spec>', 'where events are kept: sqlite:PATH, memory:, postgres://USER@HOST:PORT/DB or etcd://HOST:PORT[,HOST:PORT...]', DEFAULT_STORAGE)
    .option(`${STORAGE_PASSWORD_FILE_FLAG} <path>`, storagePasswordHelp('--storage'))
    .option('--event-ttl <duration>', 'how long an event lives after its last write, like kube-apiserver (0 keeps events forever)', '1h')
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(['error', 'warn', 'info', 'debug']).default('info'))
    .option('--mirror <kubeconfig|url|in-cluster>', "also archive every event of this cluster into the store (a kubeconfig file, an API server URL, or in-cluster for the pod's service account)")
    .option('--mirror-context <name>', 'kubeconfig context of --mirror')
    .option('--cluster <name>', 'label what --mirror archives with this cluster name')
    .option('--retention <duration>', 'drop archived events and occurrences older than this, e.g. 30d; NAME=DURATION for one cluster (repeatable: --retention 30d --retention prod=90d)', collect)
    .option('--max-size <size>', 'drop the oldest archived data while the store is larger than this, e.g. 10GB')
    .option('--sinks <file>', 'also deliver the store\'s events to the sinks of this export config (docs/export.md); SIGHUP reloads it')
    .option('--event-metrics [file]', 'count the events written from now on as Prometheus series on /metrics (kevents_events_total); FILE sets labels, rules and the series cap (docs/metrics.md)')
    .option('--tls-cert-file <path>', 'serve HTTPS with this PEM certificate (chain); reloaded when the file changes')
    .option('--tls-private-key-file <path>', 'PEM private key of --tls-cert-file')
    .option('--token-auth-file <path>', "bearer tokens in kube-apiserver's CSV format token,user,uid,\"group1,group2\" (groups kevents:readers, kevents:writers); reloaded when it changes")
    .option('--delegate-auth', 'authenticate unknown tokens with the cluster\'s TokenReview and authorize with SubjectAccessReview (in-cluster, or --delegate-auth-kubeconfig)')
    .option('--delegate-auth-kubeconfig <path>', 'kubeconfig of the cluster --delegate-auth asks (default: the in-cluster service account)')
    .option('--requestheader-client-ca-file <path>', 'trust the user named in X-Remote-User/X-Remote-Group headers from a front proxy (kube-apiserver\'s aggregation layer) whose TLS client certificate this CA signed; with --delegate-auth and no such flag, read from the cluster\'s kube-system/extension-apiserver-authentication')
    .option('--requestheader-allowed-names <names>', 'common names the front proxy\'s certificate may have, comma-separated (default: any the CA signed)', collect)
    .option('--requestheader-username-headers <headers>', 'headers naming the user, first with a value wins (default X-Remote-User)', collect)
    .option('--requestheader-group-headers <headers>', 'headers naming the user\'s groups (default X-Remote-Group)', collect)
    .option('--requestheader-extra-headers-prefix <prefixes>', 'prefixes of headers carrying the user\'s extra (default X-Remote-Extra-)', collect)
    .option('--insecure-allow-remote', 'listen on a non-loopback address without TLS or authentication')
    .option('--allowed-host <host>', 'without authentication, also answer requests whose Host is this name (a port-forward or proxy); IP addresses, localhost and the --listen host always are (repeatable)', collect)
    .option('--read-header-timeout <duration>', "close a connection that has not sent its request's headers in this time, like kube-apiserver", '32s')
    .option('--read-timeout <duration>', 'answer 408 to a request whose body has not arrived in this time (a watch, once asked for, is not cut)', '1m')
    .option('--max-connections <n>', 'connections open at once; past them a connection may only ask for /healthz, /livez or /readyz (8 slots kept for probes), anything else is answered 429 and closed', '4096')
    .option('--max-connections-per-address <n>', 'the same cap for one remote address (with authentication, counting only connections not yet authenticated); default a sixteenth of --max-connections')
    .option('--max-answer-bytes <size>', 'JSON bytes one answer holds (lists, search, occurrences, timeline, incidents): a page past it ends short with a continue token, a timeline or incident list says what it left out', '16MiB')
    .option('--render-cache-size <size>', 'memory for the wire bytes of listed event versions, which later lists reuse (0 keeps none)', '64MiB')
    .option('--render-cache-warm <duration>', "before listening, render the stored events' Table rows into the render cache for at most this long, up to its size (0 warms nothing)", '5s')
    .option(
      '--workers <n>',
      'processes that answer requests over one SQLite file (auto: one per core); this process then keeps the file and its writes (docs/serve.md: Several processes)',
      '1',
    )
    .option('--writer-thread', 'commit the SQLite file\'s writes on a second thread while the first answers requests: more creates/s where a core is free, a little more CPU per create (docs/serve.md: Several processes)')
    .addOption(new Option('--history-window <duration>', 'how long watch history is kept').hideHelp());
}
