import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { createConsoleLogger } from '../internal/index.js';
import type { LogLevel } from '../internal/index.js';
import { CliError, UsageError } from './errors.js';
import { startExport } from './export-sinks.js';
import type { CliIO } from './run.js';
import { parseListen } from './serve.js';
import { describeStorage, parseStorageSpec } from './storage-spec.js';
import { untilSignal } from './until-signal.js';

/** ExportFlags are the flags of `kevents export`. */
export interface ExportFlags {
  config: string;
  from: string;
  listen: string;
  logLevel: string;
}

/** runExport runs `kevents export` until SIGINT or SIGTERM; SIGHUP reloads the config. */
export async function runExport(flags: ExportFlags, io: CliIO): Promise<void> {
  const spec = parseStorageSpec(flags.from);
  const { host, port } = parseListen(flags.listen);
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  const logger = createConsoleLogger({ level, stream: io.stderr });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
  const run = await startExport(spec, flags.config, { logger, registry, flag: '--from' });
  const http = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': registry.contentType });
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
      const r = run.exporter.readiness();
      res.writeHead(r.ready ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(r.ready ? 'ok' : `[-]export failed: ${r.message}\nreadyz check failed`);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('not found');
  });
  let address: AddressInfo;
  try {
    address = await new Promise<AddressInfo>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, host, () => resolve(http.address() as AddressInfo));
    });
  } catch (e) {
    await run.stop();
    throw new CliError(`cannot listen on ${host}:${port}: ${(e as Error).message}`);
  }
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  io.stdout.write(
    [
      `kevents export: ${describeStorage(spec)} -> ${run.sinks.join(', ')} (SIGHUP reloads ${flags.config})`,
      `  metrics and readiness on http://${shownHost}:${address.port} (/metrics, /readyz)`,
      '',
    ].join('\n'),
  );
  await untilSignal(logger);
  await run.stop();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
