import {
  createRequestGate,
  createTokenFileAuthenticator,
  groupAuthorizer,
  isLoopbackHost,
  loadTlsKeyPair,
  subjectAccessReviewAuthorizer,
  tokenReviewAuthenticator,
  watchTlsKeyPair,
} from '../../../auth/index.js';
import type { Authenticator, Authorizer, FileWatch, ReviewClient, TlsKeyPair } from '../../../auth/index.js';
import type { Logger } from '../../../internal/index.js';
import type { RequestGate } from '../../../server/index.js';
import { CliError, UsageError } from '../../errors.js';

/** ServeAuthFlags are the TLS and authentication flags of `kevents serve`. */
export interface ServeAuthFlags {
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  tokenAuthFile?: string;
  delegateAuth?: boolean;
  delegateAuthKubeconfig?: string;
  insecureAllowRemote?: boolean;
}

/** ServeSecurity is what the flags compose: a TLS pair, a request gate, and the file watches to stop. */
export interface ServeSecurity {
  tls?: TlsKeyPair;
  gate?: RequestGate;
  /** watchTls starts reloading the certificate into the running server. */
  watchTls(onReload: (pair: TlsKeyPair) => void): void;
  describe: string;
  close(): void;
}

const given = (v: string | undefined): v is string => v !== undefined && v !== '';

/**
 * prepareServeSecurity reads the TLS and token files and builds the request gate.
 * It refuses a non-loopback `--listen` without both TLS and authentication
 * unless `--insecure-allow-remote` says so: events name pods, nodes and
 * images, and an open write API lets anyone forge them.
 */
export async function prepareServeSecurity(flags: ServeAuthFlags, host: string, logger: Logger): Promise<ServeSecurity> {
  const certGiven = given(flags.tlsCertFile);
  const keyGiven = given(flags.tlsPrivateKeyFile);
  if (certGiven !== keyGiven) throw new UsageError('--tls-cert-file and --tls-private-key-file go together: give both or neither');
  if (given(flags.delegateAuthKubeconfig) && flags.delegateAuth !== true) throw new UsageError('--delegate-auth-kubeconfig needs --delegate-auth');
  const authGiven = given(flags.tokenAuthFile) || flags.delegateAuth === true;
  if (!isLoopbackHost(host) && !(certGiven && authGiven) && flags.insecureAllowRemote !== true) {
    const missing = [...(certGiven ? [] : ['TLS (--tls-cert-file and --tls-private-key-file)']), ...(authGiven ? [] : ['authentication (--token-auth-file or --delegate-auth)'])];
    throw new UsageError(`refusing to listen on ${host} without ${missing.join(' and ')}: anyone who reaches it could read and forge events (pass --insecure-allow-remote to listen anyway)`);
  }
  const watches: FileWatch[] = [];
  const close = (): void => {
    for (const w of watches) w.close();
  };
  try {
    let tls: TlsKeyPair | undefined;
    if (certGiven && keyGiven) {
      try {
        tls = loadTlsKeyPair(flags.tlsCertFile!, flags.tlsPrivateKeyFile!);
      } catch (e) {
        throw new CliError((e as Error).message, { cause: e });
      }
    }
    const authenticators: Authenticator[] = [];
    const authorizers: Authorizer[] = [];
    const parts: string[] = [];
    if (given(flags.tokenAuthFile)) {
      let tokens;
      try {
        tokens = createTokenFileAuthenticator({ path: flags.tokenAuthFile, logger });
      } catch (e) {
        throw new CliError((e as Error).message, { cause: e });
      }
      watches.push(tokens);
      authenticators.push(tokens);
      authorizers.push(groupAuthorizer);
      parts.push(`tokens from ${flags.tokenAuthFile} (${tokens.size})`);
    }
    if (flags.delegateAuth === true) {
      const client = await reviewClient(flags.delegateAuthKubeconfig);
      authenticators.push(tokenReviewAuthenticator(client.rest));
      authorizers.push(subjectAccessReviewAuthorizer(client.rest));
      parts.push(`TokenReview and SubjectAccessReview at ${client.server}`);
    }
    const gate = authenticators.length > 0 ? createRequestGate({ authenticators, authorizers, logger }) : undefined;
    return {
      ...(tls !== undefined ? { tls } : {}),
      ...(gate !== undefined ? { gate } : {}),
      describe: gate === undefined ? 'none (anyone who reaches the address may read and write)' : parts.join('; '),
      watchTls(onReload) {
        if (tls === undefined) return;
        watches.push(watchTlsKeyPair({ certFile: flags.tlsCertFile!, keyFile: flags.tlsPrivateKeyFile!, logger, onReload }));
      },
      close,
    };
  } catch (e) {
    close();
    throw e;
  }
}

async function reviewClient(kubeconfig: string | undefined): Promise<{ rest: ReviewClient; server: string }> {
  const { RestClient, KubeConnection, loadKubeConfig } = await import('../../../client/index.js');
  if (given(kubeconfig)) {
    let kc;
    try {
      kc = await loadKubeConfig({ kubeconfig });
    } catch (e) {
      throw new CliError(`--delegate-auth-kubeconfig: ${(e as Error).message}`, { cause: e });
    }
    const connection = new KubeConnection(kc);
    return { rest: new RestClient(connection, { userAgent: 'kevents-serve' }), server: connection.server.origin };
  }
  const { inClusterConnection } = await import('../../../cluster/index.js');
  let connection;
  try {
    connection = inClusterConnection();
  } catch (e) {
    throw new CliError(`--delegate-auth: ${(e as Error).message} (outside a cluster, give --delegate-auth-kubeconfig)`, { cause: e });
  }
  return { rest: new RestClient(connection, { userAgent: 'kevents-serve' }), server: connection.server.origin };
}
