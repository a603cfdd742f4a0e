import { readFileSync, statSync } from 'node:fs';
import https from 'node:https';
import { isIPv6 } from 'node:net';
import type { Connection, RequestTarget } from '../client/index.js';
import { requestUrl } from '../client/index.js';

/** SERVICE_ACCOUNT_DIR is where the kubelet mounts a pod's service-account token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** TOKEN_RECHECK_MS is how often the token file is checked for a rotation (client-go re-reads it every minute). */
export const TOKEN_RECHECK_MS = 1_000;

/** InClusterConfig is what a pod knows of its cluster: the API server, its CA, the token and the pod's namespace. */
export interface InClusterConfig {
  server: URL;
  caFile: string;
  tokenFile: string;
  namespace: string;
}

/** NotInClusterError says why a process is not running in a pod. */
export class NotInClusterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotInClusterError';
  }
}

/**
 * inClusterConfig reads the in-cluster configuration as client-go's
 * rest.InClusterConfig does: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT
 * for the server, and the mounted service account (`dir`, default
 * $KEVENTS_SERVICE_ACCOUNT_DIR, else SERVICE_ACCOUNT_DIR) for the token, the CA and the namespace. No kubeconfig.
 */
export function inClusterConfig(options: { env?: NodeJS.ProcessEnv; dir?: string } = {}): InClusterConfig {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '') {
    throw new NotInClusterError('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  }
  // KEVENTS_SERVICE_ACCOUNT_DIR points a process outside a pod (a sidecar, a test) at a copy of the mount.
  const dir = options.dir ?? (env.KEVENTS_SERVICE_ACCOUNT_DIR || SERVICE_ACCOUNT_DIR);
  const tokenFile = `${dir}/token`;
  const caFile = `${dir}/ca.crt`;
  for (const f of [tokenFile, caFile]) {
    try {
      statSync(f);
    } catch (e) {
      throw new NotInClusterError(`unable to load in-cluster configuration: ${f}: ${(e as Error).message}`);
    }
  }
  let namespace = 'default';
  try {
    const ns = readFileSync(`${dir}/namespace`, 'utf8').trim();
    if (ns !== '') namespace = ns;
  } catch {
    // client-go falls back to "default" when the namespace file is missing.
  }
  return { server: new URL(`https://${isIPv6(host) ? `[${host}]` : host}:${port}`), caFile, tokenFile, namespace };
}

/**
 * InClusterConnection reaches the API server with the pod's service account.
 * The token file is checked for a change at most every TOKEN_RECHECK_MS and
 * re-read when it changed, so the kubelet's rotation of a projected token is
 * picked up within a second (client-go waits up to a minute); connections
 * already open carry on, as their requests were authenticated when sent.
 */
export class InClusterConnection implements Connection {
  readonly server: URL;
  private readonly agent: https.Agent;
  private token = '';
  private signature = '';
  private checkedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly config: InClusterConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.server = config.server;
    this.agent = new https.Agent({ keepAlive: true, ca: readFileSync(config.caFile) });
    this.currentToken();
  }

  /** currentToken is the bearer token requests carry now. */
  currentToken(): string {
    const t = this.now();
    if (t - this.checkedAt < TOKEN_RECHECK_MS) return this.token;
    this.checkedAt = t;
    try {
      const s = statSync(this.config.tokenFile);
      const sig = `${s.ino}:${s.size}:${s.mtimeMs}`;
      if (sig !== this.signature) {
        const token = readFileSync(this.config.tokenFile, 'utf8').trim();
        if (token !== '') {
          this.token = token;
          this.signature = sig;
        }
      }
    } catch (e) {
      // A missing file mid-rotation keeps the last token; with none at all there is nothing to send.
      if (this.token === '') throw new NotInClusterError(`cannot read the service-account token ${this.config.tokenFile}: ${(e as Error).message}`);
    }
    return this.token;
  }

  target(path: string, query?: URLSearchParams): Promise<RequestTarget> {
    const url = requestUrl(this.server, path, query);
    return Promise.resolve({ url, options: { headers: { Authorization: `Bearer ${this.currentToken()}` }, agent: this.agent }, transport: https });
  }
}

/** inClusterConnection is an InClusterConnection over inClusterConfig(options). */
export function inClusterConnection(options: { env?: NodeJS.ProcessEnv; dir?: string } = {}): InClusterConnection {
  return new InClusterConnection(inClusterConfig(options));
}
