import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Registry } from 'prom-client';
import type { Logger } from '../../../internal/index.js';
import { StorageError } from '../../../storage/index.js';
import { fromWireError, runFollowerWrite, toWireError } from '../../../storage/sqlite/index.js';
import type { FollowerWrite, SqliteEventStore, WireError, WriterLink } from '../../../storage/sqlite/index.js';
import { CliError, UsageError } from '../../errors.js';

/**
 * With `kevents serve --workers N`, the process started is the primary: it owns
 * the SQLite file (every write, expiry, compaction, retention, the mirror and
 * the export) and serves no HTTP. N worker processes share the listening socket
 * (node:cluster hands each new connection to the next worker) and answer every
 * request: reads from their own connection to the file, writes through the
 * primary. After each commit the primary tells every worker its revision before
 * it acknowledges the commit's writes, and each worker reads the new versions
 * from the file and hands them to its watchers; a client that hears of a write
 * can list or watch it from any worker.
 *
 * Messages, all JSON over the cluster's IPC channel:
 *   worker → primary: call (a write), ready (listening), failed (could not start)
 *   primary → worker: reply (a write's outcome), commit (revision, compaction point),
 *                     health (the primary's failing readiness checks), stop
 */

/** WORKER_ENV carries the serve flags to a worker process (JSON); a process started with it is a worker. */
export const WORKER_ENV = 'KEVENTS_SERVE_WORKER';

type Message =
  | { kevents: 'call'; id: number; op: FollowerWrite; args: unknown[] }
  | { kevents: 'reply'; id: number; value?: unknown; error?: WireError }
  | { kevents: 'commit'; rv: number; compacted: number }
  | { kevents: 'health'; failed: { name: string; message: string }[] }
  | { kevents: 'ready'; ui: boolean }
  | { kevents: 'failed'; message: string }
  | { kevents: 'stop' }
  | { kevents: 'metrics'; id: number }
  | { kevents: 'metrics-text'; id: number; contentType?: string; text?: string; error?: string }
  | { kevents: 'metrics-json'; id: number; json: MetricJson };

/** MetricJson is a registry's `getMetricsAsJSON()`, which prom-client's AggregatorRegistry sums across processes. */
type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

function isMessage(m: unknown): m is Message {
  return typeof m === 'object' && m !== null && typeof (m as { kevents?: unknown }).kevents === 'string';
}

/** parseWorkers reads `--workers`: a whole number from 1, or `auto` for the machine's cores. */
export function parseWorkers(text: string | undefined): number {
  if (text === undefined || text === '') return 1;
  if (text === 'auto') return availableParallelism();
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new UsageError(`--workers must be a whole number from 1 to 64, or auto, not ${JSON.stringify(text)}`);
  return n;
}

/** workerFlags are the serve flags of this process when it is a worker, else undefined. */
export function workerFlags<T>(): T | undefined {
  const text = process.env[WORKER_ENV];
  if (!cluster.isWorker || text === undefined) return undefined;
  return JSON.parse(text) as T;
}

/** cliScript is the kevents command to start workers with: this one, or the bundle's entry beside this module. */
function cliScript(): string {
  const argv1 = process.argv[1];
  if (argv1 !== undefined && /^kevents(\.js)?$/.test(basename(argv1))) return argv1;
  const beside = fileURLToPath(new URL('./kevents.js', import.meta.url));
  if (existsSync(beside)) return beside;
  throw new CliError('--workers starts the kevents command again for each worker, and cannot find it here: run dist/bin/kevents.js (npm run build)');
}

/** WorkerPool is the primary's side: it starts, restarts and stops the workers, runs their writes and tells them of commits. */
export class WorkerPool {
  private readonly workers = new Set<Worker>();
  private store: SqliteEventStore | undefined;
  private stopping = false;
  private health: { name: string; message: string }[] = [];
  private healthTimer: NodeJS.Timeout | undefined;
  ui = false;
  private nextId = 1;
  private readonly gathering = new Map<number, (json: MetricJson) => void>();

  constructor(
    readonly count: number,
    private readonly flags: object,
    private readonly logger: Logger,
    /** registry holds this process's own metrics (the mirror's, the export's, the events'). */
    private readonly registry: () => Promise<Registry>,
  ) {}

  /** metrics is every process's metrics in one exposition: this one's and each worker's, summed by prom-client's AggregatorRegistry. */
  private async metrics(): Promise<{ contentType: string; text: string }> {
    const { AggregatorRegistry } = await import('prom-client');
    const own = await (await this.registry()).getMetricsAsJSON();
    const others = [...this.workers].filter((w) => w.isConnected()).map(
      (w) =>
        new Promise<MetricJson>((resolve) => {
          const id = this.nextId++;
          // A worker that does not answer in time (busy, or exiting) is left out rather than failing the scrape.
          const timer = setTimeout(() => {
            this.gathering.delete(id);
            resolve([]);
          }, 5000);
          this.gathering.set(id, (json) => {
            clearTimeout(timer);
            resolve(json);
          });
          w.send({ kevents: 'metrics', id } satisfies Message);
        }),
    );
    const merged = AggregatorRegistry.aggregate([own, ...(await Promise.all(others))]);
    return { contentType: merged.contentType, text: await merged.metrics() };
  }

  /** commit is the store's `onCommit`: every worker hears of it before the commit's writes are acknowledged. */
  commit(rv: number, compacted: number): void {
    const m: Message = { kevents: 'commit', rv, compacted };
    for (const w of this.workers) if (w.isConnected()) w.send(m);
  }

  /**
   * start forks the workers over `store` and resolves with the address they
   * listen on, once every one does; it rejects with the first one's failure.
   */
  async start(store: SqliteEventStore, readiness: () => { name: string; message: string }[]): Promise<{ address: string; port: number; family: string }> {
    this.store = store;
    cluster.setupPrimary({ exec: cliScript(), args: ['serve'], silent: false });
    const listening = await Promise.all(Array.from({ length: this.count }, () => this.fork()));
    this.healthTimer = setInterval(() => {
      const failed = readiness();
      if (JSON.stringify(failed) === JSON.stringify(this.health)) return;
      this.health = failed;
      for (const w of this.workers) if (w.isConnected()) w.send({ kevents: 'health', failed } satisfies Message);
    }, 1000);
    this.healthTimer.unref();
    this.health = readiness();
    for (const w of this.workers) if (w.isConnected()) w.send({ kevents: 'health', failed: this.health } satisfies Message);
    return listening[0]!;
  }

  private fork(): Promise<{ address: string; port: number; family: string }> {
    const worker = cluster.fork({ [WORKER_ENV]: JSON.stringify(this.flags) });
    this.workers.add(worker);
    return new Promise((resolve, reject) => {
      let started = false;
      let address: { address: string; port: number; family: string } | undefined;
      worker.on('listening', (a) => {
        address = { address: a.address ?? '127.0.0.1', port: a.port, family: a.addressType === 6 ? 'IPv6' : 'IPv4' };
      });
      worker.on('message', (m: unknown) => {
        if (!isMessage(m)) return;
        if (m.kevents === 'call') return this.run(worker, m.id, m.op, m.args);
        if (m.kevents === 'metrics-json') {
          const done = this.gathering.get(m.id);
          this.gathering.delete(m.id);
          return done?.(m.json);
        }
        if (m.kevents === 'metrics') {
          this.metrics().then(
            ({ contentType, text }) => worker.isConnected() && worker.send({ kevents: 'metrics-text', id: m.id, contentType, text } satisfies Message),
            (e: unknown) => worker.isConnected() && worker.send({ kevents: 'metrics-text', id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies Message),
          );
          return;
        }
        if (m.kevents === 'ready') {
          started = true;
          this.ui = m.ui;
          if (this.health.length > 0) worker.send({ kevents: 'health', failed: this.health } satisfies Message);
          resolve(address ?? { address: '127.0.0.1', port: 0, family: 'IPv4' });
        } else if (m.kevents === 'failed') reject(new CliError(m.message));
      });
      worker.on('exit', (code, signal) => {
        this.workers.delete(worker);
        if (!started) return reject(new CliError(`a serve worker exited before it listened (${signal ?? `exit code ${code}`})`));
        if (this.stopping) return;
        this.logger.error('serve worker exited; starting another', { pid: worker.process.pid, code, signal });
        setTimeout(() => {
          if (!this.stopping) this.fork().catch((e: unknown) => this.logger.error('serve worker failed to start', { error: e }));
        }, 500).unref();
      });
    });
  }

  private run(worker: Worker, id: number, op: FollowerWrite, args: unknown[]): void {
    const result = runFollowerWrite(this.store!, op, args);
    result.then(
      (value) => worker.isConnected() && worker.send({ kevents: 'reply', id, value } satisfies Message),
      (e: unknown) => worker.isConnected() && worker.send({ kevents: 'reply', id, error: toWireError(e) } satisfies Message),
    );
  }

  /** stop asks every worker to close its connections and exit, and waits (killing one that takes over 10 s). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.healthTimer !== undefined) clearInterval(this.healthTimer);
    await Promise.all(
      [...this.workers].map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            const kill = setTimeout(() => w.process.kill('SIGKILL'), 10_000);
            w.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            if (w.isConnected()) w.send({ kevents: 'stop' } satisfies Message);
            else w.process.kill('SIGTERM');
          }),
      ),
    );
  }
}

/**
 * PrimaryLink is a worker's side: its store's WriterLink, and what the primary
 * tells it (commits, the primary's readiness, stop).
 */
export class PrimaryLink implements WriterLink {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  gone = false;
  /** onHealth hears the primary's failing readiness checks (its mirror's, its export's) whenever they change. */
  onHealth: (failed: { name: string; message: string }[]) => void = () => {};
  onCommit: (rv: number, compacted: number) => void = () => {};
  onStop: () => void = () => {};
  /** registry is this worker's own metrics, which the primary gathers for a scrape. */
  registry: (() => Promise<Registry>) | undefined;
  private readonly scrapes = new Map<number, { resolve: (v: { contentType: string; text: string }) => void; reject: (e: Error) => void }>();

  constructor() {
    process.on('message', (m: unknown) => {
      if (!isMessage(m)) return;
      switch (m.kevents) {
        case 'reply': {
          const p = this.pending.get(m.id);
          if (p === undefined) return;
          this.pending.delete(m.id);
          if (m.error === undefined) p.resolve(m.value);
          else p.reject(fromWireError(m.error));
          return;
        }
        case 'commit':
          return this.onCommit(m.rv, m.compacted);
        case 'health':
          return this.onHealth(m.failed);
        case 'stop':
          return this.onStop();
        case 'metrics': {
          const id = m.id;
          void (this.registry?.() ?? Promise.resolve(undefined))
            .then((r) => r?.getMetricsAsJSON() ?? [])
            .then(
              (json) => process.send?.({ kevents: 'metrics-json', id, json } satisfies Message),
              () => process.send?.({ kevents: 'metrics-json', id, json: [] } satisfies Message),
            );
          return;
        }
        case 'metrics-text': {
          const p = this.scrapes.get(m.id);
          this.scrapes.delete(m.id);
          if (m.error !== undefined || m.text === undefined) p?.reject(new Error(`cannot gather the metrics of every serve process: ${m.error ?? 'no answer'}`));
          else p?.resolve({ contentType: m.contentType ?? 'text/plain', text: m.text });
          return;
        }
      }
    });
    process.on('disconnect', () => {
      this.gone = true;
      for (const p of this.pending.values()) p.reject(new StorageError('Unreachable', 'the serve primary process is gone'));
      this.pending.clear();
      for (const p of this.scrapes.values()) p.reject(new Error('the serve primary process is gone'));
      this.scrapes.clear();
      this.onStop();
    });
  }

  call(op: FollowerWrite, args: unknown[]): Promise<unknown> {
    if (this.gone || process.send === undefined) return Promise.reject(new StorageError('Unreachable', 'the serve primary process is gone'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      process.send!({ kevents: 'call', id, op, args } satisfies Message, undefined, undefined, (e: Error | null) => {
        if (e === null || !this.pending.has(id)) return;
        this.pending.delete(id);
        reject(new StorageError('Unreachable', `cannot reach the serve primary process: ${e.message}`));
      });
    });
  }

  /** metrics asks the primary for every serve process's metrics in one exposition (a scrape of /metrics). */
  metrics(): Promise<{ contentType: string; text: string }> {
    if (this.gone || process.send === undefined) return Promise.reject(new Error('the serve primary process is gone'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.scrapes.set(id, { resolve, reject });
      process.send!({ kevents: 'metrics', id } satisfies Message);
    });
  }

  /** tell sends the primary a worker's news (ready, failed). */
  tell(m: { kevents: 'ready'; ui: boolean } | { kevents: 'failed'; message: string }): void {
    process.send?.(m);
  }
}
