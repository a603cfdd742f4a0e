// /healthz, /livez, /readyz and /metrics: what a kubelet's probes and Prometheus read of a server.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { requestTarget } from '../../auth/index.js';
import type { Logger } from '../../internal/index.js';
import { sendError } from './http-io.js';
import type { ServerMetrics } from './metrics.js';

/** ReadinessCheck is one named check of /readyz. */
export interface ReadinessCheck {
  name: string;
  check(): { ready: boolean; message: string };
}

/** HealthRoutesOptions are what the health routes read. */
export interface HealthRoutesOptions {
  /** ready is the storage check of /readyz: true once the store is ready and the server listens. */
  ready: () => boolean;
  readinessChecks?: ReadinessCheck[] | undefined;
  metrics: ServerMetrics;
  /** metricsText answers /metrics in place of `metrics` (a worker answers for every process of `serve --workers`). */
  metricsText?: (() => Promise<{ contentType: string; text: string }>) | undefined;
  logger: Logger;
}

/** registerHealthRoutes adds the probes and /metrics to the router. */
export function registerHealthRoutes(router: Router<HTTPVersion.V1>, o: HealthRoutesOptions): void {
  const { logger, metrics } = o;
  const health = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('ok');
  };
  for (const path of ['/healthz', '/livez']) router.on('GET', path, health);
  router.on('GET', '/readyz', (req, res) => {
    // As kube-apiserver: each check by name, why one fails only with ?verbose, which the gate
    // (where there is one) lets through for an authorized client alone; the log always has it.
    const verbose = requestTarget(req).params.has('verbose');
    const checks = [{ name: 'storage', ready: o.ready(), message: 'not ready' }, ...(o.readinessChecks ?? []).map((c) => ({ name: c.name, ...c.check() }))];
    const failed = checks.filter((c) => !c.ready);
    if (failed.length === 0 && !verbose) return health(req, res);
    const lines = checks.map((c) => (c.ready ? `[+]${c.name} ok` : `[-]${c.name} failed: ${verbose ? c.message : 'reason withheld'}`));
    if (failed.length > 0) logger.warn('readyz check failed', { checks: failed.map((c) => `${c.name}: ${c.message}`).join('; ') });
    res.writeHead(failed.length === 0 ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.end(`${lines.join('\n')}\nreadyz check ${failed.length === 0 ? 'passed' : 'failed'}`);
  });
  router.on('GET', '/metrics', (_req, res) => {
    if (o.metricsText !== undefined) {
      o.metricsText().then(
        ({ contentType, text }) => {
          res.writeHead(200, { 'Content-Type': contentType });
          res.end(text);
        },
        (e: unknown) => sendError(res, e, logger, '/metrics'),
      );
      return;
    }
    metrics.registry().then(
      async (registry) => {
        const text = await registry.metrics();
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(text);
      },
      (e: unknown) => sendError(res, e, logger, '/metrics'),
    );
  });
}
