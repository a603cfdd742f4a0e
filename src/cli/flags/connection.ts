import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { ARCHIVE_API, isStatusError } from '../../api/index.js';
import { createReadClient, loadKubeConfig, namespaceOf } from '../../client/index.js';
import type { ConnectionFlags, ReadClient } from '../../client/index.js';
import { DEFAULT_SERVER } from './defaults.js';
import { CliError } from '../errors.js';
import type { CliIO } from '../io.js';
import { selfCommand } from '../self-command.js';

/** ServerOrigin says where a command found its server, which decides the fix an error names. */
export type ServerOrigin = 'flag' | 'env' | 'kubeconfig' | 'default';

/** Connection is a resolved kubeconfig and where its server came from. */
export interface Connection {
  kubeConfig: KubeConfig;
  origin: ServerOrigin;
  server: URL;
}

/**
 * kubeconfigPresent tells whether kubectl would find a kubeconfig: $KUBECONFIG,
 * ~/.kube/config, or a pod's service account. With none, client-node would aim
 * at localhost:8080; kevents aims at its own default server instead.
 */
export function kubeconfigPresent(env: NodeJS.ProcessEnv): boolean {
  if ((env.KUBECONFIG ?? '') !== '') return true;
  if ((env.KUBERNETES_SERVICE_HOST ?? '') !== '') return true;
  const home = env.HOME ?? env.USERPROFILE;
  return home !== undefined && home !== '' && existsSync(join(home, '.kube', 'config'));
}

/**
 * connect resolves --server, --kubeconfig and --context as kubectl does
 * ($KEVENTS_SERVER standing in for --server); with no kubeconfig at all it
 * aims at a local `kevents serve` on DEFAULT_SERVER.
 */
export async function connect(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Promise<Connection> {
  const server = flags.server ?? env.KEVENTS_SERVER;
  const explicit = (flags.kubeconfig ?? '') !== '' || (flags.context ?? '') !== '';
  if (server !== undefined && server !== '') {
    const kubeConfig = await loadKubeConfig({ server });
    return { kubeConfig, origin: flags.server !== undefined && flags.server !== env.KEVENTS_SERVER ? 'flag' : 'env', server: serverOf(kubeConfig) };
  }
  const present = kubeconfigPresent(env);
  if ((flags.kubeconfig ?? '') === '' && (flags.context ?? '') !== '' && !present) {
    throw new CliError(`--context ${flags.context} needs a kubeconfig, and none was found ($KUBECONFIG is unset, ~/.kube/config is missing): pass --kubeconfig PATH, or --server URL`);
  }
  if (explicit || present) {
    try {
      const kubeConfig = await loadKubeConfig(flags);
      return { kubeConfig, origin: 'kubeconfig', server: serverOf(kubeConfig) };
    } catch (e) {
      if (explicit) throw e;
      // A $KUBECONFIG naming no readable file is no kubeconfig, as for kubectl.
    }
  }
  const kubeConfig = await loadKubeConfig({ server: DEFAULT_SERVER });
  return { kubeConfig, origin: 'default', server: serverOf(kubeConfig) };
}

function serverOf(kc: KubeConfig): URL {
  return new URL(kc.getCurrentCluster()?.server ?? DEFAULT_SERVER);
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function transportCode(e: unknown): string | undefined {
  const own = (e as { code?: unknown }).code;
  if (typeof own === 'string') return own;
  const cause = (e as { cause?: { code?: unknown } }).cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}

/** isUnreachable tells whether an error is a server that cannot be reached at all (refused, or no such host). */
export function isUnreachable(e: unknown): boolean {
  const code = transportCode(e);
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

/**
 * explainTransport turns a failed connection into one line that names the
 * fix, starting with kubectl's own words where kubectl has them; API errors
 * (Status) and anything else pass through unchanged.
 */
export function explainTransport(e: unknown, c: Pick<Connection, 'origin' | 'server'>, kevents: string = selfCommand()): unknown {
  if (isStatusError(e)) return e;
  const code = transportCode(e);
  const host = c.server.host;
  const where = c.origin === 'env' ? '$KEVENTS_SERVER' : c.origin === 'flag' ? '--server' : 'the kubeconfig';
  if (code === 'ECONNREFUSED') {
    if (c.origin === 'default') {
      return new CliError(
        `no kevents server is running at ${c.server.origin} and no kubeconfig was found: start one with "${kevents} serve" in another terminal, or pass --server URL or --kubeconfig PATH`,
      );
    }
    const refused = `The connection to the server ${host} was refused - did you specify the right host or port?`;
    if (c.origin === 'kubeconfig') return new CliError(`${refused} Check the cluster's server with "kubectl config view --minify", or pass --server URL`);
    const local = LOOPBACK.has(c.server.hostname) && c.server.protocol === 'http:';
    const port = c.server.port === '' ? '80' : c.server.port;
    return new CliError(
      local
        ? `${refused} Nothing listens there: start "${kevents} serve --listen ${c.server.hostname}:${port}", or fix ${where} (kevents serve listens on ${DEFAULT_SERVER} by default)`
        : `${refused} Check ${where}`,
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new CliError(`Unable to connect to the server: dial tcp: lookup ${c.server.hostname}: no such host. Check the host in ${where}`);
  }
  if (code === 'ECONNRESET' || code === 'ETIMEDOUT') return new CliError(`Unable to connect to the server: ${(e as Error).message}`);
  return e;
}

/** ReadConnectionFlags are the connection flags of every read command. */
export interface ReadConnectionFlags {
  server?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
}

/** ReadConnection is a read client and the namespace the flags and kubeconfig chose. */
export interface ReadConnection extends Pick<Connection, 'origin' | 'server'> {
  client: ReadClient;
  /** namespace is `-n`, else the context's namespace, else `default`. */
  namespace: string;
  /** listNamespace is what to list: undefined with `-A`. */
  listNamespace: string | undefined;
}

/**
 * connectRead resolves the connection flags (see connect) into a read client
 * and the namespace to read.
 */
export async function connectRead(flags: ReadConnectionFlags, io: CliIO): Promise<ReadConnection> {
  const { kubeConfig, origin, server } = await connect(flags, io.env);
  const namespace = flags.namespace ?? namespaceOf(kubeConfig);
  const client = createReadClient({ kubeConfig, ...(io.archiveEvents === true ? { eventsPrefix: `/apis/${ARCHIVE_API}` } : {}) });
  return { client, namespace, listNamespace: flags.allNamespaces ? undefined : namespace, origin, server };
}
