// kevents kubeconfig: flags (flags.ts) → options → validate → run.
import { stringify } from 'yaml';
import { CliError } from '../../errors.js';
import type { CliIO } from '../../io.js';
import { selfCommand } from '../../self-command.js';

/** kubeconfigFor renders a kubeconfig that points kubectl at a kevents server. */
export function kubeconfigFor(server: string, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kevents', cluster: { server } }],
    users: [{ name: 'kevents', user: {} }],
    contexts: [{ name: 'kevents', context: { cluster: 'kevents', user: 'kevents', namespace } }],
    'current-context': 'kevents',
    preferences: {},
  });
}

/** KubeconfigFlags are the flags of `kevents kubeconfig`. */
export interface KubeconfigFlags {
  server: string;
  namespace: string;
  check: boolean;
}

/** KubeconfigOptions are the checked flags: the server's URL, the context's namespace, and whether to ask the server first. */
export interface KubeconfigOptions {
  url: URL;
  namespace: string;
  check: boolean;
}

/** kubeconfigOptions checks the flags before anything is asked of the server. */
export function kubeconfigOptions(flags: KubeconfigFlags): KubeconfigOptions {
  let url: URL;
  try {
    url = new URL(flags.server);
  } catch {
    throw new CliError(`invalid --server ${JSON.stringify(flags.server)}: use a URL such as http://127.0.0.1:8080`);
  }
  return { url, namespace: flags.namespace, check: flags.check };
}

/** runKubeconfig checks that a kevents server answers, then prints its kubeconfig. */
export async function runKubeconfig(flags: KubeconfigFlags, io: CliIO): Promise<void> {
  const o = kubeconfigOptions(flags);
  if (o.check) {
    try {
      const res = await fetch(new URL('/version', o.url), { signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error(`GET /version answered ${res.status}`);
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      throw new CliError(`no kevents server answers at ${o.url.origin} (${cause === 'ECONNREFUSED' ? 'connection refused' : cause}): start one with "${selfCommand()} serve" in another terminal, or pass --no-check`);
    }
  }
  io.stdout.write(kubeconfigFor(o.url.origin, o.namespace));
}
