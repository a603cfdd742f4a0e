import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { requestUrl } from './connection.js';
import type { Connection, RequestTarget } from './connection.js';
import { RequestConstructionError } from './request-errors.js';

/**
 * KubeConnection turns a client-node `KubeConfig` (file or in-cluster) into
 * request options: it asks `applyToHTTPSOptions` for credentials on every
 * request, so rotating tokens (exec plugins, projected service-account
 * tokens) stay fresh, and keeps the first agent so connections carry over.
 */
export class KubeConnection implements Connection {
  private agent: http.Agent | undefined;
  private readonly config: KubeConfig;
  readonly server: URL;

  constructor(kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (cluster === null) throw new RequestConstructionError('kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    // client-node refuses a plain-http server unless skipTLSVerify is set, though there is no TLS to
    // verify; kubectl accepts it, and a local `kevents serve` speaks http. A view of the config with
    // the flag set lets credentials still flow through client-node.
    if (this.server.protocol === 'http:' && !cluster.skipTLSVerify) {
      const view = Object.create(kubeConfig) as KubeConfig;
      view.getCurrentCluster = () => ({ ...cluster, skipTLSVerify: true });
      this.config = view;
    } else {
      this.config = kubeConfig;
    }
  }

  /** target prepares a request for `path` (which starts with /) and `query`. */
  async target(path: string, query?: URLSearchParams): Promise<RequestTarget> {
    const options: https.RequestOptions = { headers: {} };
    await this.config.applyToHTTPSOptions(options);
    if (this.agent === undefined) this.agent = options.agent as http.Agent | undefined;
    options.agent = this.agent;
    const url = requestUrl(this.server, path, query);
    return { url, options, transport: url.protocol === 'http:' ? http : https };
  }
}
