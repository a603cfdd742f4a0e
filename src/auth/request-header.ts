import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { withAuthenticatedGroup } from './user.js';
import type { UserInfo } from './user.js';

/**
 * RequestHeaderConfig is k8s.io/apiserver's request-header (front-proxy) authentication: who may
 * assert a user in headers (a client certificate signed by the CA the server verifies client
 * certificates against, with one of `allowedNames` as its common name; none named: any), and
 * the headers that carry the user (`--requestheader-*` flags, or the cluster's ConfigMap
 * `kube-system/extension-apiserver-authentication`).
 */
export interface RequestHeaderConfig {
  /** allowedNames are the common names a front proxy's certificate may have; empty allows any the CA signed. */
  allowedNames: readonly string[];
  /** usernameHeaders are read in order; the first with a value names the user. */
  usernameHeaders: readonly string[];
  /** groupHeaders each add every value they carry as a group. */
  groupHeaders: readonly string[];
  /** extraHeaderPrefixes start headers whose (unescaped, lower-cased) rest is a key of the user's extra. */
  extraHeaderPrefixes: readonly string[];
}

/** DEFAULT_REQUEST_HEADERS are k8s.io/apiserver's delegating defaults: what kube-apiserver's aggregator sends. */
export const DEFAULT_REQUEST_HEADERS: Omit<RequestHeaderConfig, 'allowedNames'> = {
  usernameHeaders: ['X-Remote-User'],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
};

/**
 * RequestAuthentication is what a request authenticator answers: a user, `undefined` when the
 * request is not one it authenticates (others may), or a refusal (a 401) with the reason to log.
 */
export type RequestAuthentication = { user: UserInfo } | { refused: string } | undefined;

/** RequestAuthenticator authenticates a request from what it carries besides a bearer token (its connection, its headers). */
export interface RequestAuthenticator {
  authenticateRequest(req: IncomingMessage): RequestAuthentication;
}

/** PeerCertificate is what the authenticator reads of a TLS connection (a TLSSocket satisfies it). */
interface PeerConnection {
  authorized?: boolean;
  authorizationError?: Error | string;
  getPeerCertificate?: TLSSocket['getPeerCertificate'];
}

function headerValues(req: IncomingMessage, name: string): string[] {
  return req.headersDistinct[name.toLowerCase()] ?? [];
}

function unescapeKey(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * requestHeaderAuthenticator trusts the user named in a request's headers only from a
 * connection whose client certificate the server verified against the request-header CA and
 * whose common name is allowed, as k8s.io/apiserver's x509-verified request-header
 * authenticator does: without a certificate the headers are ignored, a certificate that did not
 * verify or names another proxy is refused (a bearer token may still authenticate the request, as
 * upstream's union of authenticators allows). Extra keys are the header's rest lower-cased, then
 * percent-unescaped. The user gets `system:authenticated`, as upstream adds it.
 */
export function requestHeaderAuthenticator(config: RequestHeaderConfig): RequestAuthenticator {
  const allowed = new Set(config.allowedNames);
  const prefixes = config.extraHeaderPrefixes.map((p) => p.toLowerCase());
  return {
    authenticateRequest(req) {
      const socket = req.socket as PeerConnection;
      const cert = socket.getPeerCertificate?.();
      // No certificate (or a plain-HTTP connection): the headers are anyone's to write.
      if (cert === undefined || cert === null || Object.keys(cert).length === 0) return undefined;
      if (socket.authorized !== true) {
        return { refused: `client certificate not verified against the request-header CA: ${String(socket.authorizationError ?? 'unknown')}` };
      }
      const cn = typeof cert.subject?.CN === 'string' ? cert.subject.CN : '';
      if (allowed.size > 0 && !allowed.has(cn)) return { refused: `client certificate CN ${JSON.stringify(cn)} is not one of --requestheader-allowed-names` };
      const username = config.usernameHeaders.map((h) => headerValues(req, h).find((v) => v !== '')).find((v) => v !== undefined);
      // As upstream, a verified proxy that names no user authenticates nothing: a bearer token still may.
      if (username === undefined) return undefined;
      const groups = config.groupHeaders.flatMap((h) => headerValues(req, h));
      const extra: Record<string, string[]> = {};
      for (const [name, values] of Object.entries(req.headersDistinct)) {
        const prefix = prefixes.find((p) => name.startsWith(p));
        if (prefix === undefined || values === undefined) continue;
        const key = unescapeKey(name.slice(prefix.length));
        if (key !== '') extra[key] = [...(extra[key] ?? []), ...values];
      }
      const user: UserInfo = { username, uid: '', groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
      return { user: withAuthenticatedGroup(user) };
    },
  };
}

/**
 * parseHeaderList reads one `--requestheader-*` flag as pflag's string slices do: each given
 * value split on commas, blanks dropped.
 */
export function parseHeaderList(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}
