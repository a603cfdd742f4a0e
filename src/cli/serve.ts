import { realClock, createConsoleLogger } from '../internal/index.js';
import type { LogLevel } from '../internal/index.js';
import { createEventsServer } from '../server/index.js';
import { DEFAULT_HISTORY_WINDOW_SECONDS } from '../storage/index.js';
import { CliError, UsageError } from './errors.js';
import { formatGoDuration, parseGoDuration } from './go-duration.js';
import type { CliIO } from './run.js';
import { version } from './version.js';
import { describeStorage, openStore, parseStorageSpec } from './storage-spec.js';

/** ServeFlags are the flags of `kevents serve`. */
export interface ServeFlags {
  listen: string;
  storage: string;
  eventTtl: string;
  logLevel: string;
}

/** parseListen reads `HOST:PORT`, `:PORT` or `PORT`. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:?(\d+)$/.exec(text.trim());
  if (m === null) throw new UsageError(`invalid --listen ${JSON.stringify(text)}: use HOST:PORT, e.g. 127.0.0.1:8080`);
  const port = Number(m[3]);
  if (port > 65535) throw new UsageError(`invalid --listen port ${port}`);
  const host = m[1] ?? (m[2] === undefined || m[2] === '' ? '127.0.0.1' : m[2]);
  return { host, port };
}

/** runServe starts the events API server and runs until SIGINT or SIGTERM. */
export async function runServe(flags: ServeFlags, io: CliIO): Promise<void> {
  const { host, port } = parseListen(flags.listen);
  const spec = parseStorageSpec(flags.storage);
  let ttlMs: number;
  try {
    ttlMs = parseGoDuration(flags.eventTtl);
  } catch (e) {
    throw new UsageError(`--event-ttl: ${(e as Error).message}`);
  }
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  const logger = createConsoleLogger({ level, stream: io.stderr });
  // Watches must be able to resume for at least as long as an event lives.
  const historyWindowSeconds = Math.max(DEFAULT_HISTORY_WINDOW_SECONDS, Math.round(ttlMs / 1000) + 15 * 60);
  const store = await openStore(spec, { clock: realClock, logger, historyWindowSeconds });
  const server = createEventsServer({ store, eventTtlSeconds: Math.round(ttlMs / 1000), clock: realClock, logger, keventsVersion: version });
  let address;
  try {
    address = await server.listen(host, port);
  } catch (e) {
    await store.close();
    const code = (e as { code?: string }).code;
    if (code === 'EADDRINUSE') throw new CliError(`cannot listen on ${host}:${port}: the address is already in use (choose another with --listen)`);
    if (code === 'EACCES') throw new CliError(`cannot listen on ${host}:${port}: permission denied`);
    throw e;
  }
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;
  io.stdout.write(
    [
      `kevents serve: listening on ${url}`,
      `  storage:   ${describeStorage(spec)}`,
      `  event TTL: ${ttlMs === 0 ? 'none (events are kept forever)' : formatGoDuration(ttlMs)}`,
      '',
      'Point kubectl at it:',
      `  kubectl --server ${url} get events -A`,
      'or write a kubeconfig:',
      `  kevents kubeconfig --server ${url} > kevents.kubeconfig && export KUBECONFIG=$PWD/kevents.kubeconfig`,
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info('shutting down', { signal });
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve();
    };
    const onInt = (): void => stop('SIGINT');
    const onTerm = (): void => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
  await server.close();
  await store.close();
}
