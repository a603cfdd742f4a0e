import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import {
  createRequestGate,
  DEFAULT_REQUEST_HEADERS,
  parseHeaderList,
  requestHeaderAuthenticator,
  createTokenFileAuthenticator,
  groupAuthorizer,
  isLoopbackHost,
  loadTlsKeyPair,
  subjectAccessReviewAuthorizer,
  tokenReviewAuthenticator,
  watchFiles,
  watchTlsKeyPair,
} from '../../../auth/index.js';
import type { Authenticator, Authorizer, FileWatch, RequestAuthenticator, RequestHeaderConfig, ReviewClient, TlsKeyPair } from '../../../auth/index.js';
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
  /** requestheaderClientCaFile is the CA a front proxy's client certificate is verified against (k8s.io/apiserver's flag). */
  requestheaderClientCaFile?: string;
  /** requestheaderAllowedNames are the common names a front proxy's certificate may have (empty: any the CA signed). */
  requestheaderAllowedNames?: string[];
  requestheaderUsernameHeaders?: string[];
  requestheaderGroupHeaders?: string[];
  requestheaderExtraHeadersPrefix?: string[];
}

/** REQUEST_HEADER_FLAGS are the flags of front-proxy authentication besides the CA file, with their ServeAuthFlags keys. */
const REQUEST_HEADER_FLAGS = [
  ['--requestheader-allowed-names', 'requestheaderAllowedNames'],
  ['--requestheader-username-headers', 'requestheaderUsernameHeaders'],
  ['--requestheader-group-headers', 'requestheaderGroupHeaders'],
  ['--requestheader-extra-headers-prefix', 'requestheaderExtraHeadersPrefix'],
] as const;

/** ServeSecurity is what the flags compose: a TLS pair, a request gate, and the file watches to stop. */
export interface ServeSecurity {
  /** tls is the serving pair and, with front-proxy authentication, the CA its client certificates are verified against. */
  tls?: TlsKeyPair & { clientCa?: Buffer };
  gate?: RequestGate;
  /**
   * watchTls starts reloading the certificate, and the front proxy's CA where a file gave it
   * (`--requestheader-client-ca-file`, as k8s.io/apiserver's dynamic CA content), into the running server.
   */
  watchTls(onReload: (tls: TlsKeyPair & { clientCa?: Buffer }) => void): void;
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
  const caGiven = given(flags.requestheaderClientCaFile);
  const headerFlagGiven = REQUEST_HEADER_FLAGS.find(([, key]) => parseHeaderList(flags[key]) !== undefined);
  if (headerFlagGiven !== undefined && !caGiven) throw new UsageError(`${headerFlagGiven[0]} needs --requestheader-client-ca-file: headers are trusted only from a client certificate that CA signed`);
  if (caGiven && !certGiven) throw new UsageError('--requestheader-client-ca-file needs --tls-cert-file and --tls-private-key-file: a front proxy proves itself with a client certificate, over TLS');
  const authGiven = given(flags.tokenAuthFile) || flags.delegateAuth === true || caGiven;
  if (!isLoopbackHost(host) && !(certGiven && authGiven) && flags.insecureAllowRemote !== true) {
    const missing = [...(certGiven ? [] : ['TLS (--tls-cert-file and --tls-private-key-file)']), ...(authGiven ? [] : ['authentication (--token-auth-file, --delegate-auth or --requestheader-client-ca-file)'])];
    throw new UsageError(`refusing to listen on ${host} without ${missing.join(' and ')}: anyone who reaches it could read and forge events (pass --insecure-allow-remote to listen anyway)`);
  }
  const watches: FileWatch[] = [];
  const close = (): void => {
    for (const w of watches) w.close();
  };
  try {
    let tls: (TlsKeyPair & { clientCa?: Buffer }) | undefined;
    if (certGiven && keyGiven) {
      try {
        tls = loadTlsKeyPair(flags.tlsCertFile!, flags.tlsPrivateKeyFile!);
      } catch (e) {
        throw new CliError((e as Error).message, { cause: e });
      }
    }
    const authenticators: Authenticator[] = [];
    const requestAuthenticators: RequestAuthenticator[] = [];
    const authorizers: Authorizer[] = [];
    const parts: string[] = [];
    let frontProxy: { config: RequestHeaderConfig; ca: Buffer; from: string } | undefined;
    if (caGiven) frontProxy = { config: requestHeaderFlags(flags), ca: readClientCa(flags.requestheaderClientCaFile!), from: flags.requestheaderClientCaFile! };
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
      // As k8s.io/apiserver's delegated authentication: the front proxy the cluster names, unless the flags name one.
      if (frontProxy === undefined && tls !== undefined) frontProxy = await clusterFrontProxy(client.rest, logger);
    }
    if (frontProxy !== undefined) {
      requestAuthenticators.push(requestHeaderAuthenticator(frontProxy.config));
      // Without --delegate-auth the users a front proxy names get the roles of kevents' groups.
      if (authorizers.length === 0) authorizers.push(groupAuthorizer);
      const names = frontProxy.config.allowedNames.length > 0 ? frontProxy.config.allowedNames.join(',') : 'any name';
      parts.unshift(`front proxy (${names}) signed by ${frontProxy.from}`);
      if (tls !== undefined) tls = { ...tls, clientCa: frontProxy.ca };
    }
    const gate = authenticators.length + requestAuthenticators.length > 0 ? createRequestGate({ authenticators, requestAuthenticators, authorizers, logger }) : undefined;
    return {
      ...(tls !== undefined ? { tls } : {}),
      ...(gate !== undefined ? { gate } : {}),
      describe: gate === undefined ? 'none (anyone who reaches the address may read and write)' : parts.join('; '),
      watchTls(onReload) {
        if (tls === undefined) return;
        // Both watches hand the server the whole of what it serves: the latest pair with the latest CA.
        let current = tls;
        const reload = (next: Partial<TlsKeyPair & { clientCa: Buffer }>): void => {
          current = { ...current, ...next };
          onReload(current);
        };
        watches.push(watchTlsKeyPair({ certFile: flags.tlsCertFile!, keyFile: flags.tlsPrivateKeyFile!, logger, onReload: reload }));
        if (caGiven && current.clientCa !== undefined) watches.push(watchClientCa(flags.requestheaderClientCaFile!, logger, (clientCa) => reload({ clientCa })));
      },
      close,
    };
  } catch (e) {
    close();
    throw e;
  }
}

/** requestHeaderFlags are the front-proxy settings the flags give, k8s.io/apiserver's delegating defaults where they give none. */
function requestHeaderFlags(flags: ServeAuthFlags): RequestHeaderConfig {
  return {
    allowedNames: parseHeaderList(flags.requestheaderAllowedNames) ?? [],
    usernameHeaders: parseHeaderList(flags.requestheaderUsernameHeaders) ?? DEFAULT_REQUEST_HEADERS.usernameHeaders,
    groupHeaders: parseHeaderList(flags.requestheaderGroupHeaders) ?? DEFAULT_REQUEST_HEADERS.groupHeaders,
    extraHeaderPrefixes: parseHeaderList(flags.requestheaderExtraHeadersPrefix) ?? DEFAULT_REQUEST_HEADERS.extraHeaderPrefixes,
  };
}

/** readClientCa reads the request-header CA bundle, refusing one that holds no usable certificate. */
function readClientCa(path: string): Buffer {
  let ca: Buffer;
  try {
    ca = readFileSync(path);
  } catch (e) {
    throw new CliError(`cannot read --requestheader-client-ca-file '${path}': ${(e as Error).message}`, { cause: e });
  }
  checkCa(ca, `--requestheader-client-ca-file '${path}'`);
  return ca;
}

/**
 * watchClientCa reads the request-header CA file again when it changes. A file that holds no usable CA (a rotation
 * half written) is logged and the CA in use kept, until the next change.
 */
function watchClientCa(path: string, logger: Logger, onReload: (ca: Buffer) => void): FileWatch {
  return watchFiles({
    paths: [path],
    logger,
    onChange() {
      onReload(readClientCa(path));
      logger.info('front-proxy client CA reloaded', { file: path });
    },
  });
}

function checkCa(ca: Buffer, what: string): void {
  if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new CliError(`${what} holds no PEM certificate`);
  try {
    createSecureContext({ ca });
  } catch (e) {
    throw new CliError(`${what} is not a usable CA bundle: ${(e as Error).message}`, { cause: e });
  }
}

/** AUTHENTICATION_CONFIGMAP is where kube-apiserver publishes its front proxy's settings for extension API servers. */
const AUTHENTICATION_CONFIGMAP = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';

/**
 * clusterFrontProxy reads the front proxy's settings from the cluster's
 * `extension-apiserver-authentication` ConfigMap, as k8s.io/apiserver does for
 * `--delegate-auth` without `--requestheader-*` flags. A cluster that publishes
 * none, or that does not let kevents read it (the RoleBinding to
 * `extension-apiserver-authentication-reader`), leaves front-proxy
 * authentication off, with a warning: bearer tokens still work.
 */
async function clusterFrontProxy(rest: ConfigMapClient, logger: Logger): Promise<{ config: RequestHeaderConfig; ca: Buffer; from: string } | undefined> {
  let data: Record<string, string>;
  try {
    data = (await rest.request<{ data?: Record<string, string> }>({ method: 'GET', path: AUTHENTICATION_CONFIGMAP, verb: 'get configmaps' })).data ?? {};
  } catch (e) {
    logger.warn('front-proxy authentication off: cannot read kube-system/extension-apiserver-authentication', { error: (e as Error).message });
    return undefined;
  }
  const caText = data['requestheader-client-ca-file'];
  if (caText === undefined || caText === '') {
    logger.warn('front-proxy authentication off: kube-system/extension-apiserver-authentication names no requestheader-client-ca-file');
    return undefined;
  }
  const list = (key: string): string[] | undefined => {
    const text = data[key];
    if (text === undefined || text === '') return undefined;
    try {
      const v = JSON.parse(text) as unknown;
      if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
    } catch {
      // Not JSON: upstream would refuse the ConfigMap; the error below says which key.
    }
    throw new CliError(`kube-system/extension-apiserver-authentication: ${key} is not a JSON list of strings`);
  };
  const ca = Buffer.from(caText);
  checkCa(ca, 'kube-system/extension-apiserver-authentication requestheader-client-ca-file');
  return {
    config: {
      allowedNames: list('requestheader-allowed-names') ?? [],
      usernameHeaders: list('requestheader-username-headers') ?? DEFAULT_REQUEST_HEADERS.usernameHeaders,
      groupHeaders: list('requestheader-group-headers') ?? DEFAULT_REQUEST_HEADERS.groupHeaders,
      extraHeaderPrefixes: list('requestheader-extra-headers-prefix') ?? DEFAULT_REQUEST_HEADERS.extraHeaderPrefixes,
    },
    ca,
    from: 'kube-system/extension-apiserver-authentication',
  };
}

/** ConfigMapClient reads one object from the cluster (a RestClient satisfies it). */
interface ConfigMapClient extends ReviewClient {
  request<T>(req: { method: 'GET' | 'POST'; path: string; body?: unknown; verb: string }): Promise<T>;
}

async function reviewClient(kubeconfig: string | undefined): Promise<{ rest: ConfigMapClient; server: string }> {
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
