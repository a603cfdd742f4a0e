import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { CliError } from '../errors.js';

/** HealthCheck is one named readiness check of `/readyz`. */
export interface HealthCheck {
  name: string;
  check(): { ready: boolean; message: string };
}

/** HealthServer is a listening `/metrics`, `/healthz`, `/livez` and `/readyz` endpoint. */
export interface HealthServer {
  /** origin is what the banner prints: http://HOST:PORT. */
  origin: string;
  close(): Promise<void>;
}

/**
 * listenHealth serves a process's metrics and health on `host:port`, as
 * `kevents mirror` and `kevents export` do: `/readyz` fails naming each failed
 * check, in kube-apiserver's `[-]name failed: …` form, and says why only with
 * `?verbose`, as kube-apiserver and `kevents serve` do: a probe needs the status,
 * and the reason (paths, hosts, driver errors) is for whoever asks for it. A port
 * that cannot be had is a one-line CliError.
 */
export async function listenHealth(o: { host: string; port: number; registry: Registry; checks: () => HealthCheck[] }): Promise<HealthServer> {
  const http = createServer((req, res) => {
    const [path, query = ''] = (req.url ?? '').split('?', 2);
    if (path === '/metrics') {
      o.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': o.registry.contentType });
          res.end(text);
        },
        (e: unknown) => {
          res.writeHead(500);
          res.end(String(e));
        },
      );
      return;
    }
    if (path === '/healthz' || path === '/livez') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if (path === '/readyz') {
      const verbose = new URLSearchParams(query).has('verbose');
      const failed = o.checks().flatMap((c) => {
        const r = c.check();
        return r.ready ? [] : [`[-]${c.name} failed: ${verbose ? r.message : 'reason withheld'}`];
      });
      res.writeHead(failed.length === 0 ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(failed.length === 0 ? 'ok' : `${failed.join('\n')}\nreadyz check failed`);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('not found');
  });
  let address: AddressInfo;
  try {
    address = await new Promise<AddressInfo>((resolve, reject) => {
      http.once('error', reject);
      http.listen(o.port, o.host, () => resolve(http.address() as AddressInfo));
    });
  } catch (e) {
    throw new CliError(`cannot listen on ${o.host}:${o.port}: ${(e as Error).message}`);
  }
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    origin: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
