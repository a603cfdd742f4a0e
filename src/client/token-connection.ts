import https from 'node:https';
import { requestUrl } from './connection.js';
import type { Connection, RequestTarget } from './connection.js';

/** TokenConnectionOptions name an HTTPS API server, the CA that signed its certificate, and a bearer token. */
export interface TokenConnectionOptions {
  server: string;
  /** ca is the PEM of the CA. */
  ca: string | Buffer;
  token: string;
}

/**
 * TokenConnection reaches an HTTPS API server with a static bearer token and a
 * known CA, without the kubeconfig machinery (and so without loading
 * @kubernetes/client-node): for a program that made the server itself.
 */
export class TokenConnection implements Connection {
  readonly server: URL;
  private readonly agent: https.Agent;
  private readonly token: string;

  constructor(options: TokenConnectionOptions) {
    this.server = new URL(options.server);
    if (this.server.protocol !== 'https:') throw new TypeError(`a token connection needs an https:// server, not ${JSON.stringify(options.server)}`);
    this.agent = new https.Agent({ keepAlive: true, ca: options.ca });
    this.token = options.token;
  }

  target(path: string, query?: URLSearchParams): Promise<RequestTarget> {
    const url = requestUrl(this.server, path, query);
    return Promise.resolve({ url, options: { headers: { Authorization: `Bearer ${this.token}` }, agent: this.agent }, transport: https });
  }

  /** close ends the kept-alive sockets, so a short command can exit at once. */
  close(): void {
    this.agent.destroy();
  }
}
