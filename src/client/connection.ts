import http from 'node:http';
import https from 'node:https';

/** RequestTarget is everything needed to send one request: where, through which agent, with which credentials. */
export interface RequestTarget {
  url: URL;
  options: https.RequestOptions;
  transport: typeof http | typeof https;
}

/**
 * Connection is where a RestClient sends its requests: an API server's URL and,
 * for each request, its options (agent, credentials).
 */
export interface Connection {
  readonly server: URL;
  /** target prepares a request for `path` (which starts with /) and `query`. */
  target(path: string, query?: URLSearchParams): Promise<RequestTarget>;
}

/** requestUrl joins the server's URL (which may carry a path prefix), `path` and `query`. */
export function requestUrl(server: URL, path: string, query?: URLSearchParams): URL {
  const url = new URL(server.href);
  url.pathname = url.pathname.replace(/\/$/, '') + path;
  const search = query?.toString() ?? '';
  url.search = search === '' ? '' : `?${search}`;
  return url;
}

/**
 * UrlConnection reaches an API server by URL alone, with no credentials, like
 * `kubectl --server`: a local `kevents serve` or an authenticating proxy. It
 * needs no kubeconfig machinery (and does not load @kubernetes/client-node).
 */
export class UrlConnection implements Connection {
  readonly server: URL;
  private readonly agent: http.Agent;

  constructor(server: string | URL) {
    this.server = new URL(typeof server === 'string' ? server : server.href);
    if (this.server.protocol !== 'http:' && this.server.protocol !== 'https:') {
      throw new TypeError(`unsupported server URL ${JSON.stringify(this.server.href)}: use http:// or https://`);
    }
    this.agent = this.server.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ keepAlive: true });
  }

  target(path: string, query?: URLSearchParams): Promise<RequestTarget> {
    const url = requestUrl(this.server, path, query);
    return Promise.resolve({ url, options: { headers: {}, agent: this.agent }, transport: url.protocol === 'http:' ? http : https });
  }
}
