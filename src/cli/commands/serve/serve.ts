// kevents serve: flags (flags.ts) → options (serveOptions) → run; the banner is banner.ts's.
import { realClock, createConsoleLogger } from '../../../internal/index.js';
import type { LogLevel } from '../../../internal/index.js';
import { createEventsServer, createServerMetrics, SnapshotHistogram, DEFAULT_RENDER_CACHE_MIB, DEFAULT_RENDER_CACHE_WARM_MS } from '../../../server/index.js';
import type { ConnectionLimits, KeventsServer, ReadinessCheck, ServerOptions, ServerTls } from '../../../server/index.js';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../../api/index.js';
import type { CoreEvent, Occurrence } from '../../../api/index.js';
import { DEFAULT_HISTORY_WINDOW_SECONDS } from '../../../storage/index.js';
import { storeIncidentReader } from './incident-reader.js';
import { storeTimelineReader } from './timeline-reader.js';
import { prepareServeSecurity } from './serve-auth.js';
import type { ServeAuthFlags } from './serve-auth.js';
import { untilSignal } from '../../daemon/until-signal.js';
import { CliError, UsageError } from '../../errors.js';
import { parseDurationFlag, parseGoDuration } from '../../flags/duration.js';
import { serveBanner } from './banner.js';
import type { CliIO } from '../../io.js';
import { parseListen } from '../../flags/listen.js';
import { parseRetention } from '../../flags/retention.js';
import { version } from '../../version.js';
import { selfCommand } from '../../self-command.js';
import { parseSize } from '../../flags/size.js';
import { openStore } from '../../daemon/open-store.js';
import { describeStorage, parseStorageSpec } from '../../flags/storage.js';
import type { StorageSpec } from '../../flags/storage.js';
import { withStoragePassword } from '../../flags/storage-password.js';
import { PrimaryLink, WorkerPool, parseWorkers, workerFlags } from './serve-workers.js';
import type { SqliteEventStore } from '../../../storage/sqlite/index.js';
import type { EventStore } from '../../../storage/index.js';

/** ServeFlags are the flags of `kevents serve`. */
export interface ServeFlags extends ServeAuthFlags {
  listen: string;
  storage: string;
  /** storagePasswordFile holds the password of a postgres:// --storage, which its URL then leaves out. */
  storagePasswordFile?: string;
  eventTtl: string;
  logLevel: string;
  /** mirror is a kubeconfig path or an API server URL to archive into this server's store. */
  mirror?: string;
  mirrorContext?: string;
  cluster?: string;
  /** retention is every `--retention`: a duration, or `NAME=DURATION` for one cluster. */
  retention?: string[];
  maxSize?: string;
  /** sinks is an export config: the store's changes are delivered to its sinks (docs/export.md). */
  sinks?: string;
  /** eventMetrics counts the store's events on /metrics: true for the defaults, or a config file (docs/metrics.md). */
  eventMetrics?: string | true;
  readHeaderTimeout: string;
  readTimeout: string;
  maxConnections: string;
  /** maxConnectionsPerAddress caps one address's connections (unset: a sixteenth of maxConnections). */
  maxConnectionsPerAddress?: string;
  /** renderCacheSize bounds the rendered versions lists are spliced from (a size, e.g. 64MiB). */
  renderCacheSize?: string;
  /** maxAnswerBytes bounds one answer's JSON (a size, e.g. 16MiB). */
  maxAnswerBytes?: string;
  /** renderCacheWarm bounds the time spent filling the render cache before listening (a duration; 0 warms nothing). */
  renderCacheWarm?: string;
  /** historyWindow overrides how long watch history is kept (hidden: for tests that need a 410). */
  historyWindow?: string;
  /** workers is how many processes serve the API over one SQLite file (a number, or auto for the cores); 1 serves from this process. */
  workers?: string;
  /** writerThread commits a SQLite store's writes on a thread of their own (one process). */
  writerThread?: boolean;
  /** allowedHost is every `--allowed-host`: Host names answered without authentication besides IPs, localhost and the --listen host. */
  allowedHost?: string[];
}

/**
 * Frontend is what answers HTTP for `kevents serve`: this process's server, or
 * with --workers the worker processes (see serve-workers.ts).
 */
interface Frontend {
  address: { address: string; port: number; family: string };
  ui: boolean;
  registry(): ReturnType<KeventsServer['metrics']['registry']>;
  setTls(tls: ServerTls): void;
  close(): Promise<void>;
}

/** ServeOptions are the flags of `kevents serve` that are checked before anything is opened or listened on. */
export interface ServeOptions {
  host: string;
  port: number;
  spec: StorageSpec;
  /** workers is how many processes answer requests (1: this one). */
  workers: number;
  writerThread: boolean;
  ttlMs: number;
  limits: ConnectionLimits;
  renderCacheBytes: number;
  renderCacheWarmMs: number;
  maxAnswerBytes: number;
  level: LogLevel;
}

/**
 * serveOptions checks the flags, in the order their errors were always reported.
 * TLS, tokens, --history-window and --retention are checked later, where they
 * were: a change of order would change which of two bad flags is reported.
 */
export function serveOptions(flags: ServeFlags, warn: (line: string) => void): ServeOptions {
  const { host, port } = parseListen(flags.listen);
  const spec = withStoragePassword(parseStorageSpec(flags.storage), { urlFlag: '--storage', file: flags.storagePasswordFile, warn });
  const workers = parseWorkers(flags.workers);
  if (workers > 1 && spec.kind !== 'sqlite') {
    const instead = spec.kind === 'memory' ? 'the memory store lives in one process' : `with ${spec.kind} storage, run more kevents serve replicas instead`;
    throw new UsageError(`--workers serves one SQLite file from several processes; ${instead}`);
  }
  const writerThread = flags.writerThread === true;
  if (writerThread && spec.kind !== 'sqlite') {
    throw new UsageError(`--writer-thread commits the writes of a SQLite file on a thread of their own; ${spec.kind} storage has no such file`);
  }
  if (writerThread && (flags.mirror ?? '') !== '') {
    throw new UsageError('--writer-thread cannot be used with --mirror: the mirror decides each write against the stored event as it commits, in the process that keeps the file (use --workers N to spread the requests instead)');
  }
  if (writerThread && workers > 1) {
    throw new UsageError('--writer-thread is for one process: with --workers the first process already keeps the writes apart from the processes that answer');
  }
  const ttlMs = parseDurationFlag('--event-ttl', flags.eventTtl);
  const limits = parseLimits(flags);
  const renderCacheBytes = parseSize(flags.renderCacheSize ?? `${DEFAULT_RENDER_CACHE_MIB}MiB`);
  const renderCacheWarmMs = renderCacheWarm(flags);
  const maxAnswerBytes = maxAnswerBytesOf(flags);
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  return { host, port, spec, workers, writerThread, ttlMs, limits, renderCacheBytes, renderCacheWarmMs, maxAnswerBytes, level };
}

/** MIN_ANSWER_BYTES is the smallest --max-answer-bytes: below it a page of ordinary events would end after each. */
const MIN_ANSWER_BYTES = 64 * 1024;

/** maxAnswerBytesOf reads --max-answer-bytes. */
function maxAnswerBytesOf(flags: ServeFlags): number {
  const bytes = parseSize(flags.maxAnswerBytes ?? `${DEFAULT_MAX_ANSWER_BYTES}`);
  if (bytes < MIN_ANSWER_BYTES) throw new UsageError(`--max-answer-bytes must be at least 64KiB, not ${flags.maxAnswerBytes ?? ''}`);
  return bytes;
}

/** runServe starts the events API server and runs until SIGINT or SIGTERM. */
export async function runServe(flags: ServeFlags, io: CliIO): Promise<void> {
  const asWorker = workerFlags<ServeFlags>();
  if (asWorker !== undefined) return runServeWorker(asWorker, io);
  const { host, port, spec, workers, writerThread, ttlMs, limits, renderCacheBytes, renderCacheWarmMs, maxAnswerBytes, level } = serveOptions(flags, (line) => io.stderr.write(`${line}
`));
  const logger = createConsoleLogger({ level, stream: io.stderr });
  const security = await prepareServeSecurity(flags, host, logger);
  // Watches must be able to resume for at least as long as an event lives.
  let historyWindowSeconds = Math.max(DEFAULT_HISTORY_WINDOW_SECONDS, Math.round(ttlMs / 1000) + 15 * 60);
  let compactIntervalMs: number | undefined;
  if (flags.historyWindow !== undefined && flags.historyWindow !== '') {
    historyWindowSeconds = Math.max(1, Math.round(parseDurationFlag('--history-window', flags.historyWindow) / 1000));
    compactIntervalMs = Math.min(60_000, Math.max(250, (historyWindowSeconds * 1000) / 4));
  }
  // The mirror brings @kubernetes/client-node, which is slow to load: only when asked for.
  const archivingWanted = (flags.mirror ?? '') !== '' || (flags.retention ?? []).some((r) => r !== '') || (flags.maxSize ?? '') !== '';
  const archiving = archivingWanted ? await import('../../daemon/mirror.js') : undefined;
  if (archiving !== undefined) parseRetention(flags);
  const primaryMetrics = createServerMetrics();
  const pool = workers > 1 ? new WorkerPool(workers, { ...flags }, logger, () => primaryMetrics.registry()) : undefined;
  let store;
  try {
    store = await openStore(spec, {
      clock: realClock,
      logger,
      historyWindowSeconds,
      ...(compactIntervalMs !== undefined ? { compactIntervalMs } : {}),
      ...(pool !== undefined ? { sqlite: { onCommit: (rv: number, compacted: number) => pool.commit(rv, compacted) } } : {}),
      ...(writerThread ? { writerThread } : {}),
    });
  } catch (e) {
    security.close();
    throw e;
  }
  const readinessChecks: ReadinessCheck[] = [];
  if (writerThread) {
    const { writerThreadReadiness } = await import('../../../storage/sqlite/index.js');
    readinessChecks.push({ name: 'sqlite-writer', check: () => writerThreadReadiness(store) });
  }
  let server: Frontend;
  try {
    if (pool !== undefined) {
      // The workers answer HTTP (TLS and tokens included, each from the flags); this process keeps the file and what writes it.
      security.close();
      const metrics = primaryMetrics;
      const failing = (): { name: string; message: string }[] =>
        readinessChecks.map((c) => ({ name: c.name, ...c.check() })).filter((c) => !c.ready).map(({ name, message }) => ({ name, message }));
      const address = await pool.start(store as SqliteEventStore, failing);
      server = { address, ui: pool.ui, registry: () => metrics.registry(), setTls: () => {}, close: () => pool.stop() };
      if (spec.kind === 'sqlite') await registerSearchIndexLag(metrics, store);
    } else {
      const http = eventsServer(store, security, { limits, renderCacheBytes, renderCacheWarmMs, maxAnswerBytes, ttlMs, logger, readinessChecks, allowedHosts: flags.allowedHost ?? [] });
      const address = await http.listen(host, port);
      server = { address, ui: http.ui, registry: () => http.metrics.registry(), setTls: (pair) => http.setTls(pair), close: () => http.close() };
      if (spec.kind === 'sqlite') await registerSearchIndexLag(http.metrics, store);
    }
  } catch (e) {
    security.close();
    await pool?.stop();
    await store.close();
    throw listenFailure(e, host, port);
  }
  const address = server.address;
  let archive: { stop(): void | Promise<void> } | undefined;
  let counting: { stop(): Promise<void> } | undefined;
  try {
    const mirroring = archiving !== undefined && flags.mirror !== undefined && flags.mirror !== '';
    // With --mirror the mirror tells the event metrics what it appends; without, they follow the archive's log from its head.
    let onArchived: ((changes: { occurrence: Occurrence; event: CoreEvent }[]) => void) | undefined;
    if (flags.eventMetrics !== undefined) {
      const { registerEventMetrics, startEventMetrics } = await import('../../daemon/event-metrics.js');
      const registry = await server.registry();
      if (mirroring) {
        const metrics = await registerEventMetrics(flags.eventMetrics, registry);
        onArchived = (changes) => {
          for (const c of changes) metrics.observe(c);
        };
      } else counting = await startEventMetrics(spec, flags.eventMetrics, { registry, logger });
    }
    if (archiving !== undefined && flags.mirror !== undefined && flags.mirror !== '') {
      const isUrl = /^https?:\/\//.test(flags.mirror);
      const registry = await server.registry();
      const run = await archiving.startMirror(
        store,
        {
          ...(flags.mirror === 'in-cluster' ? { inCluster: true } : isUrl ? { source: flags.mirror } : { kubeconfig: flags.mirror, context: flags.mirrorContext }),
          cluster: flags.cluster,
          retention: flags.retention,
          maxSize: flags.maxSize,
        },
        { logger, registry, onArchived },
      );
      readinessChecks.push({ name: 'mirror', check: () => run.mirror.readiness() });
      archive = run;
    } else if (archiving !== undefined) {
      archive = archiving.startStoreRetention(store, flags, logger);
    }
  } catch (e) {
    security.close();
    await counting?.stop();
    await server.close();
    await store.close();
    throw e;
  }
  let exporting: { stop(): Promise<void> } | undefined;
  if (flags.sinks !== undefined && flags.sinks !== '') {
    try {
      const { startExport } = await import('../../daemon/export-sinks.js');
      const run = await startExport(spec, flags.sinks, { logger, registry: await server.registry(), flag: '--sinks' });
      readinessChecks.push({ name: 'export', check: () => run.exporter.readiness() });
      exporting = run;
    } catch (e) {
      await archive?.stop();
      await counting?.stop();
      await server.close();
      await store.close();
      throw e;
    }
  }
  security.watchTls((pair) => server.setTls(pair));
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${security.tls !== undefined ? 'https' : 'http'}://${shownHost}:${address.port}`;
  io.stdout.write(serveBanner({ url, ui: server.ui, storage: describeStorage(spec), auth: security.describe, ttlMs, mirror: flags.mirror, kevents: selfCommand(), workers, writerThread }));
  await untilSignal(logger);
  await exporting?.stop();
  security.close();
  await archive?.stop();
  await counting?.stop();
  await server.close();
  await store.close();
}

/** eventsServer is the API server of `kevents serve` over `store`, in this process or in a worker. */
function eventsServer(
  store: EventStore,
  security: Pick<Awaited<ReturnType<typeof prepareServeSecurity>>, 'gate' | 'tls'>,
  o: Pick<ServerOptions, 'limits' | 'renderCacheBytes' | 'renderCacheWarmMs' | 'maxAnswerBytes' | 'logger' | 'readinessChecks' | 'metricsText' | 'allowedHosts'> & { ttlMs: number },
): KeventsServer {
  const { ttlMs, ...options } = o;
  return createEventsServer({
    ...options,
    store,
    eventTtlSeconds: Math.round(ttlMs / 1000),
    clock: realClock,
    keventsVersion: version,
    timeline: storeTimelineReader(store),
    incidents: storeIncidentReader(store),
    ...(security.gate !== undefined ? { gate: security.gate } : {}),
    ...(security.tls !== undefined ? { tls: security.tls } : {}),
  });
}

/** registerSearchIndexLag puts a SQLite store's search index lag on /metrics (`searchIndexLagOf`; docs/search.md). */
async function registerSearchIndexLag(metrics: Pick<KeventsServer['metrics'], 'register'>, store: EventStore): Promise<void> {
  const { SEARCH_INDEX_LAG_BOUNDS, searchIndexLagOf } = await import('../../../storage/sqlite/index.js');
  metrics.register(
    new SnapshotHistogram(
      'kevents_search_index_lag_seconds',
      "Time each stored version waited for its search index entry, from its write's commit to the entry's (searches scan the versions not indexed yet).",
      SEARCH_INDEX_LAG_BOUNDS,
      () => searchIndexLagOf(store),
    ),
  );
}

/** perWorker shares --max-connections and its per-address cap among the workers: each new connection goes to the next worker, so together they hold about the caps. */
function perWorker(limits: ConnectionLimits, workers: number): ConnectionLimits {
  const share = (n: number | undefined): number | undefined => (n === undefined ? undefined : Math.max(1, Math.ceil(n / workers)));
  return { ...limits, maxConnections: share(limits.maxConnections), maxConnectionsPerAddress: share(limits.maxConnectionsPerAddress) };
}

/** listenFailure is the one-line error of a server that could not listen. */
function listenFailure(e: unknown, host: string, port: number): unknown {
  const code = (e as { code?: string }).code;
  if (code === 'EADDRINUSE') return new CliError(`cannot listen on ${host}:${port}: the address is already in use (choose another with --listen)`);
  if (code === 'EACCES') return new CliError(`cannot listen on ${host}:${port}: permission denied`);
  return e;
}

/**
 * runServeWorker is one worker of `kevents serve --workers N`: it serves the API
 * over a follower of the primary's SQLite store (reads from the file, writes
 * through the primary) until the primary tells it to stop or goes away.
 */
async function runServeWorker(flags: ServeFlags, io: CliIO): Promise<void> {
  const link = new PrimaryLink();
  const logger = createConsoleLogger({ level: flags.logLevel as LogLevel, stream: io.stderr });
  let store: EventStore | undefined;
  let http: KeventsServer | undefined;
  let security: Awaited<ReturnType<typeof prepareServeSecurity>> | undefined;
  const stopped = new Promise<void>((resolve) => {
    link.onStop = resolve;
    // Ctrl-C reaches every process of the terminal: the primary decides when the workers stop.
    process.on('SIGINT', () => {});
    process.once('SIGTERM', () => resolve());
  });
  try {
    const { host, port } = parseListen(flags.listen);
    const ttlMs = parseGoDuration(flags.eventTtl);
    const workers = parseWorkers(flags.workers);
    const renderCacheBytes = Math.floor(parseSize(flags.renderCacheSize ?? `${DEFAULT_RENDER_CACHE_MIB}MiB`) / workers);
    security = await prepareServeSecurity(flags, host, logger);
    const follower = await openStore(parseStorageSpec(flags.storage), { clock: realClock, logger, sqlite: { writer: link } });
    store = follower;
    link.onCommit = (rv, compacted) => (follower as SqliteEventStore).followCommit(rv, compacted);
    // The primary's failing checks (its mirror, its export), as it last reported them.
    const readinessChecks: ReadinessCheck[] = [];
    link.onHealth = (failed) =>
      readinessChecks.splice(0, readinessChecks.length, ...failed.map((f) => ({ name: f.name, check: () => ({ ready: false, message: f.message }) })));
    http = eventsServer(follower, security, {
      limits: perWorker(parseLimits(flags), workers),
      renderCacheBytes,
      renderCacheWarmMs: renderCacheWarm(flags),
      maxAnswerBytes: maxAnswerBytesOf(flags),
      ttlMs,
      logger,
      readinessChecks,
      metricsText: () => link.metrics(),
      allowedHosts: flags.allowedHost ?? [],
    });
    try {
      await http.listen(host, port);
    } catch (e) {
      throw listenFailure(e, host, port);
    }
    const server = http;
    link.registry = () => server.metrics.registry();
    security.watchTls((pair) => server.setTls(pair));
    link.tell({ kevents: 'ready', ui: http.ui });
  } catch (e) {
    link.tell({ kevents: 'failed', message: e instanceof Error ? e.message : String(e) });
    security?.close();
    await store?.close().catch(() => {});
    process.exit(1);
  }
  await stopped;
  security.close();
  await http.close();
  await store.close();
  process.exit(0);
}

/** renderCacheWarm reads --render-cache-warm in milliseconds. */
function renderCacheWarm(flags: Pick<ServeFlags, 'renderCacheWarm'>): number {
  return parseDurationFlag('--render-cache-warm', flags.renderCacheWarm ?? `${DEFAULT_RENDER_CACHE_WARM_MS}ms`);
}

/** parseLimits reads the flags that bound what one client may hold of the server. */
function parseLimits(flags: Pick<ServeFlags, 'readHeaderTimeout' | 'readTimeout' | 'maxConnections' | 'maxConnectionsPerAddress'>): ConnectionLimits {
  const readHeaderTimeoutMs = parseDurationFlag('--read-header-timeout', flags.readHeaderTimeout);
  const readTimeoutMs = parseDurationFlag('--read-timeout', flags.readTimeout);
  if (readHeaderTimeoutMs <= 0 || readTimeoutMs <= 0) throw new UsageError('--read-header-timeout and --read-timeout must be longer than 0s');
  if (readTimeoutMs < readHeaderTimeoutMs) throw new UsageError('--read-timeout must not be shorter than --read-header-timeout');
  const maxConnections = Number(flags.maxConnections);
  if (!Number.isInteger(maxConnections) || maxConnections < 1) throw new UsageError(`--max-connections must be a whole number above 0, not ${JSON.stringify(flags.maxConnections)}`);
  const perAddress = flags.maxConnectionsPerAddress;
  if (perAddress === undefined) return { readHeaderTimeoutMs, readTimeoutMs, maxConnections };
  const maxConnectionsPerAddress = Number(perAddress);
  if (!Number.isInteger(maxConnectionsPerAddress) || maxConnectionsPerAddress < 1 || maxConnectionsPerAddress > maxConnections) {
    throw new UsageError(`--max-connections-per-address must be a whole number from 1 to --max-connections (${maxConnections}), not ${JSON.stringify(perAddress)}`);
  }
  return { readHeaderTimeoutMs, readTimeoutMs, maxConnections, maxConnectionsPerAddress };
}
