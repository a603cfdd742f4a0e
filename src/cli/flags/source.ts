// The source flags (--source, --kubeconfig/--context, --in-cluster) of kevents mirror, kevents serve --mirror and
// kevents export --leader-elect: below the commands, so none of them imports another to reach its source.
import { KubeConnection, RestClient, UrlConnection, createEventsClient, loadKubeConfig, namespaceOf } from '../../client/index.js';
import type { EventsClient } from '../../client/index.js';
import { CliError, UsageError } from '../errors.js';

/** SourceFlags say where a mirror reads from: a URL, or a kubeconfig and context. */
export interface SourceFlags {
  source?: string | undefined;
  kubeconfig?: string | undefined;
  context?: string | undefined;
  inCluster?: boolean | undefined;
}

/** SourceConnection is how a mirror reaches its source: the events client, a REST client for other APIs, and the namespace it runs in. */
export interface SourceConnection {
  client: EventsClient;
  rest: RestClient;
  server: string;
  /** namespace is the in-cluster namespace, or the kubeconfig context's, else `default`. */
  namespace: string;
  /** kind says how the source was given; `context` is the kubeconfig context's name. */
  kind: 'url' | 'in-cluster' | 'kubeconfig';
  context?: string;
}

/** given tells whether a string flag was given a value (absent and empty are the same to a flag). */
export const given = (v: string | undefined): v is string => v !== undefined && v !== '';

/**
 * connectSource resolves the source flags: `--source URL` (no credentials), a
 * kubeconfig and context, or the pod's service account (`--in-cluster`, and the
 * default in a pod when no other source is given, as client-go's clients do).
 */
export async function connectSource(flags: SourceFlags, env: NodeJS.ProcessEnv = process.env): Promise<SourceConnection> {
  const hasSource = given(flags.source);
  const hasKubeconfig = given(flags.kubeconfig) || given(flags.context);
  if ([hasSource, hasKubeconfig, flags.inCluster === true].filter(Boolean).length > 1) {
    throw new UsageError('give one of --source URL, --kubeconfig/--context and --in-cluster');
  }
  const userAgent = 'kevents-mirror';
  if (hasSource) {
    // A URL source needs no kubeconfig, so @kubernetes/client-node is never loaded (a third of the process's memory).
    const server = sourceOrigin(flags.source!);
    const connection = new UrlConnection(server);
    return { client: createEventsClient({ connection, userAgent }), rest: new RestClient(connection, { userAgent }), server, namespace: 'default', kind: 'url' };
  }
  if (flags.inCluster === true || (!hasKubeconfig && given(env.KUBERNETES_SERVICE_HOST))) {
    const { inClusterConfig, InClusterConnection } = await import('../../cluster/index.js');
    let config;
    try {
      config = inClusterConfig({ env });
    } catch (e) {
      throw new CliError(`--in-cluster: ${(e as Error).message}`, { cause: e });
    }
    const connection = new InClusterConnection(config);
    return {
      client: createEventsClient({ connection, userAgent }),
      rest: new RestClient(connection, { userAgent }),
      server: config.server.origin,
      namespace: config.namespace,
      kind: 'in-cluster',
    };
  }
  const kubeConfig = await loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context });
  const connection = new KubeConnection(kubeConfig);
  return {
    client: createEventsClient({ connection, userAgent }),
    rest: new RestClient(connection, { userAgent }),
    server: kubeConfig.getCurrentCluster()?.server ?? '',
    namespace: namespaceOf(kubeConfig),
    kind: 'kubeconfig',
    context: kubeConfig.getCurrentContext(),
  };
}

/** sourceOrigin is the origin of `--source` (the checkpoint's id without --cluster, so it must not change between runs). */
function sourceOrigin(source: string): string {
  try {
    return new URL(source).origin;
  } catch {
    throw new CliError(`invalid --source ${JSON.stringify(source)}: use a URL such as http://127.0.0.1:8080`);
  }
}
