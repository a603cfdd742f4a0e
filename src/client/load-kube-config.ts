import type { KubeConfig } from '@kubernetes/client-node';

/** ConnectionFlags are the flags every kevents client command takes to find its API server. */
export interface ConnectionFlags {
  /** server is a URL that bypasses kubeconfig (no credentials), like `kubectl --server`. */
  server?: string | undefined;
  /** kubeconfig is a kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then in-cluster. */
  kubeconfig?: string | undefined;
  /** context picks a kubeconfig context other than the current one. */
  context?: string | undefined;
}

/**
 * loadKubeConfig resolves the flags into a KubeConfig the way kubectl does:
 * `--server` alone needs no file; otherwise the kubeconfig (or the in-cluster
 * service account) with an optional context. Errors are one-line and say what to fix.
 */
export async function loadKubeConfig(flags: ConnectionFlags): Promise<KubeConfig> {
  // @kubernetes/client-node is most of a client process's memory (~70 MiB resident)
  // and of its start time: it is loaded here, on first use, so a program that
  // connects by URL alone (`createEventsClient({ server })`) never pays for it.
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (flags.server !== undefined && flags.server !== '') {
    let url: URL;
    try {
      url = new URL(flags.server);
    } catch {
      throw Object.assign(new Error(`invalid --server ${JSON.stringify(flags.server)}: use a URL such as http://127.0.0.1:8080`), { userFacing: true });
    }
    kc.loadFromOptions({
      clusters: [{ name: 'server', server: url.origin, skipTLSVerify: false }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'server', cluster: 'server', user: 'anonymous' }],
      currentContext: 'server',
    });
    return kc;
  }
  try {
    if (flags.kubeconfig !== undefined && flags.kubeconfig !== '') kc.loadFromFile(flags.kubeconfig);
    else kc.loadFromDefault();
  } catch (e) {
    const missing = (e as { code?: string }).code === 'ENOENT';
    const file = flags.kubeconfig !== undefined && flags.kubeconfig !== '' ? flags.kubeconfig : '$KUBECONFIG';
    throw Object.assign(
      new Error(
        missing
          ? `kubeconfig ${file} does not exist: pass an existing file with --kubeconfig PATH, or --server URL to read a kevents server without one`
          : // The YAML parser's message goes on with an excerpt of the file; its first line names the line and column.
            `cannot load kubeconfig ${file}: ${((e as Error).message.split('\n')[0] ?? '').trim()}`,
      ),
      { userFacing: true, cause: e },
    );
  }
  if (flags.context !== undefined && flags.context !== '') {
    if (kc.getContextObject(flags.context) === null) {
      const names = kc.getContexts().map((c) => c.name);
      throw Object.assign(
        new Error(`context "${flags.context}" does not exist in the kubeconfig: use one of ${names.length === 0 ? '(none: the kubeconfig has no contexts)' : names.join(', ')} ("kubectl config get-contexts" lists them)`),
        { userFacing: true },
      );
    }
    kc.setCurrentContext(flags.context);
  }
  if (kc.getCurrentCluster() === null) {
    throw Object.assign(new Error('no cluster in the kubeconfig: pass --server URL, --kubeconfig PATH or --context NAME'), { userFacing: true });
  }
  return kc;
}

/** namespaceOf is the namespace of the current context, or `default`. */
export function namespaceOf(kc: KubeConfig): string {
  const ctx = kc.getContextObject(kc.getCurrentContext());
  return ctx?.namespace !== undefined && ctx.namespace !== '' ? ctx.namespace : 'default';
}
