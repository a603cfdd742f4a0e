import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { createEventsClient, loadKubeConfig } from '../client/index.js';
import type { EventsClient } from '../client/index.js';
import { createConsoleLogger, realClock } from '../internal/index.js';
import type { LogLevel, Logger } from '../internal/index.js';
import { createMirror, startRetention } from '../mirror/index.js';
import type { Mirror, Retention } from '../mirror/index.js';
import { isArchiveStore } from '../storage/index.js';
import type { ArchiveStore, EventStore } from '../storage/index.js';
import type { ExportRun } from './export-sinks.js';
import { untilSignal } from './until-signal.js';
import { CliError, UsageError } from './errors.js';
import { parseGoDuration } from './go-duration.js';
import type { CliIO } from './run.js';
import { parseListen } from './serve.js';
import { describeStorage, openStore, parseStorageSpec } from './storage-spec.js';

/** MirrorFlags are the flags of `kevents mirror`. */
export interface MirrorFlags {
  kubeconfig?: string;
  context?: string;
  source?: string;
  to: string;
  cluster?: string;
  retention?: string;
  maxSize?: string;
  /** cacheSize is the SQLite page cache in MiB. */
  cacheSize: string;
  listen: string;
  logLevel: string;
  /** sinks is an export config: the archive's changes are delivered to its sinks (docs/export.md). */
  sinks?: string;
}

/** SourceFlags say where a mirror reads from: a URL, or a kubeconfig and context. */
export interface SourceFlags {
  source?: string | undefined;
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

/** RetentionFlags are `--retention` and `--max-size`. */
export interface RetentionFlags {
  retention?: string | undefined;
  maxSize?: string | undefined;
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  ki: 1024,
  kib: 1024,
  mi: 1024 ** 2,
  mib: 1024 ** 2,
  gi: 1024 ** 3,
  gib: 1024 ** 3,
  ti: 1024 ** 4,
  tib: 1024 ** 4,
};

/** parseSize reads a size such as `500MB`, `10Gi`, `2GiB` or a number of bytes. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = SIZE_UNITS[(m?.[2] ?? '').toLowerCase()];
  if (m === null || unit === undefined) throw new UsageError(`invalid size ${JSON.stringify(text)}: use e.g. 500MB, 10GB or 8GiB`);
  return Math.round(Number(m[1]) * unit);
}

/** parseRetention reads `--retention` and `--max-size` (both optional). */
export function parseRetention(flags: RetentionFlags): { maxAgeMs?: number; maxBytes?: number } {
  const out: { maxAgeMs?: number; maxBytes?: number } = {};
  if (flags.retention !== undefined && flags.retention !== '') {
    try {
      out.maxAgeMs = parseGoDuration(flags.retention);
    } catch (e) {
      throw new UsageError(`--retention: ${(e as Error).message}`);
    }
  }
  if (flags.maxSize !== undefined && flags.maxSize !== '') out.maxBytes = parseSize(flags.maxSize);
  return out;
}

/** MirrorRun is a running mirror with its retention loop. */
export interface MirrorRun {
  mirror: Mirror;
  retention: Retention;
  /** source describes where the mirror reads from, for messages. */
  source: string;
  stop(): Promise<void>;
}

/**
 * startMirror composes a mirror from command-line flags: the source client, the
 * checkpoint id (the cluster name, else the source URL) and the retention loop.
 */
export async function startMirror(
  store: EventStore,
  flags: SourceFlags & RetentionFlags & { cluster?: string | undefined },
  deps: { logger: Logger; registry?: Registry },
): Promise<MirrorRun> {
  if (!isArchiveStore(store)) throw new CliError('this storage backend cannot hold an archive (occurrences and checkpoints): use sqlite:, postgres:// or memory:');
  const archive: ArchiveStore = store;
  const hasSource = flags.source !== undefined && flags.source !== '';
  const hasKubeconfig = (flags.kubeconfig !== undefined && flags.kubeconfig !== '') || (flags.context !== undefined && flags.context !== '');
  if (hasSource && hasKubeconfig) throw new UsageError('give either --source URL or --kubeconfig/--context, not both');
  let client: EventsClient;
  let server: string;
  if (flags.source !== undefined && flags.source !== '') {
    // A URL source needs no kubeconfig, so @kubernetes/client-node is never loaded (a third of the process's memory).
    server = sourceOrigin(flags.source);
    client = createEventsClient({ server, userAgent: 'kevents-mirror' });
  } else {
    const kubeConfig = await loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context });
    server = kubeConfig.getCurrentCluster()?.server ?? '';
    client = createEventsClient({ kubeConfig, userAgent: 'kevents-mirror' });
  }
  const cluster = flags.cluster !== undefined && flags.cluster !== '' ? flags.cluster : undefined;
  const mirror = createMirror({
    source: client.coreV1,
    sourceId: cluster ?? server,
    store: archive,
    cluster,
    clock: realClock,
    logger: deps.logger,
    ...(deps.registry !== undefined ? { registry: deps.registry } : {}),
  });
  const retention = startRetention(archive, { ...parseRetention(flags), clock: realClock, logger: deps.logger });
  const running = mirror.run();
  return {
    mirror,
    retention,
    source: server,
    async stop() {
      retention.stop();
      await mirror.stop();
      await running;
    },
  };
}

/** sourceOrigin is the origin of `--source` (the checkpoint's id without --cluster, so it must not change between runs). */
function sourceOrigin(source: string): string {
  try {
    return new URL(source).origin;
  } catch {
    throw new CliError(`invalid --source ${JSON.stringify(source)}: use a URL such as http://127.0.0.1:8080`);
  }
}

/** startStoreRetention runs retention over a store's occurrences and events without a mirror (`kevents serve --retention`). */
export function startStoreRetention(store: EventStore, flags: RetentionFlags, logger: Logger): Retention {
  if (!isArchiveStore(store)) throw new CliError('--retention and --max-size need a storage backend with an archive: use sqlite:, postgres:// or memory:');
  return startRetention(store, { ...parseRetention(flags), clock: realClock, logger });
}

/** runMirror runs `kevents mirror` until SIGINT or SIGTERM. */
export async function runMirror(flags: MirrorFlags, io: CliIO): Promise<void> {
  if ((flags.source ?? '') === '' && (flags.kubeconfig ?? '') === '' && (flags.context ?? '') === '') {
    throw new UsageError('say where to mirror from: --source URL, or --kubeconfig PATH [--context NAME]');
  }
  const spec = parseStorageSpec(flags.to);
  const { host, port } = parseListen(flags.listen);
  parseRetention(flags);
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  const logger = createConsoleLogger({ level, stream: io.stderr });
  const cacheMiB = Number(flags.cacheSize);
  if (!Number.isInteger(cacheMiB) || cacheMiB < 1 || cacheMiB > 65536) throw new UsageError(`--cache-size must be a whole number of MiB from 1 to 65536, not ${JSON.stringify(flags.cacheSize)}`);
  const store = await openStore(spec, { clock: realClock, logger, sqliteCacheMiB: cacheMiB });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
  let run: MirrorRun;
  try {
    await store.ready();
    run = await startMirror(store, flags, { logger, registry });
  } catch (e) {
    await store.close();
    throw e;
  }
  let exporting: ExportRun | undefined;
  if (flags.sinks !== undefined && flags.sinks !== '') {
    try {
      const { startExport } = await import('./export-sinks.js');
      exporting = await startExport(spec, flags.sinks, { logger, registry, flag: '--sinks' });
    } catch (e) {
      await run.stop();
      await store.close();
      throw e;
    }
  }
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
      const checks = [['mirror', run.mirror.readiness()] as const, ...(exporting !== undefined ? [['export', exporting.exporter.readiness()] as const] : [])];
      const failed = checks.filter(([, r]) => !r.ready);
      res.writeHead(failed.length === 0 ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(failed.length === 0 ? 'ok' : `${failed.map(([name, r]) => `[-]${name} failed: ${r.message}`).join('\n')}\nreadyz check failed`);
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
    await exporting?.stop();
    await run.stop();
    await store.close();
    throw new CliError(`cannot listen on ${host}:${port}: ${(e as Error).message}`);
  }
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  io.stdout.write(
    [
      `kevents mirror: ${run.source} -> ${describeStorage(spec)}${flags.cluster ? ` (cluster ${flags.cluster})` : ''}`,
      `  metrics and readiness on http://${shownHost}:${address.port} (/metrics, /readyz)`,
      '',
    ].join('\n'),
  );
  await untilSignal(logger);
  await exporting?.stop();
  await run.stop();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
  await store.close();
}
