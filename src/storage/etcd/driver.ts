import { StorageError } from '../errors.js';
import type { EtcdClient } from './options.js';

/** FaultPolicy is the shape of the cockatiel policies etcd3 runs each call through. */
export interface FaultPolicy {
  execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T>;
}

/** EtcdDriver is the part of the `etcd3` module the store needs to make its own client. */
export interface EtcdDriver {
  Etcd3: new (options: {
    hosts: string[];
    grpcOptions?: Record<string, unknown>;
    defaultCallOptions?: (context: { isStream: boolean }) => { deadline?: Date };
    faultHandling?: { host?: (host: string) => FaultPolicy; global?: FaultPolicy };
  }) => EtcdClient;
}

/** NEVER_ABORTED is shared by every call: a signal per call costs more than the call's own bookkeeping. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * passThrough runs each call once. The store retries by itself, knowing which
 * calls are safe to repeat; etcd3's defaults (three immediate tries of any
 * call, and a breaker that shuts a member out for 5 s after three failures)
 * would repeat writes and, during an election, shut out every member at once.
 */
export const passThrough: FaultPolicy = {
  execute: async (fn) => await fn({ signal: NEVER_ABORTED }),
};

/** DriverImporter loads the `etcd3` module; tests substitute one that fails. */
export type DriverImporter = () => Promise<unknown>;

const importEtcd3: DriverImporter = () => import('etcd3');

/**
 * loadEtcdDriver imports the optional `etcd3` package on first use, so that
 * kevents runs without it unless an etcd store is asked for. A missing package is
 * Unreachable with the command that fixes it.
 */
export async function loadEtcdDriver(importer: DriverImporter = importEtcd3): Promise<EtcdDriver> {
  let mod: unknown;
  try {
    mod = await importer();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    throw new StorageError(
      'Unreachable',
      missing
        ? 'the etcd storage backend needs the "etcd3" package, which is not installed: run `npm install etcd3`'
        : `cannot load the "etcd3" package: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
  // etcd3 is CommonJS: its exports arrive as named exports or under `default`, depending on the loader.
  const named = mod as Partial<EtcdDriver> & { default?: Partial<EtcdDriver> };
  const Etcd3 = named.Etcd3 ?? named.default?.Etcd3;
  if (typeof Etcd3 !== 'function') throw new StorageError('Unreachable', 'the installed "etcd3" package has no Etcd3 client class');
  return { Etcd3 };
}

/** toEtcdHost turns `host:port` into the URL form the driver expects, and leaves URLs alone. */
export function toEtcdHost(endpoint: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `http://${endpoint}`;
}

/**
 * etcdEndpointsFromUrl reads a `--storage etcd://HOST:PORT[,HOST:PORT…]` value
 * into member endpoints. It throws a plain Error naming the problem; the caller
 * decides how a bad flag is reported.
 */
export function etcdEndpointsFromUrl(spec: string): string[] {
  const m = /^etcd:\/\/(.*)$/.exec(spec);
  if (m === null) throw new Error(`not an etcd storage URL: ${JSON.stringify(spec)} (want etcd://HOST:PORT[,HOST:PORT...])`);
  const hosts = m[1]!.replace(/\/+$/, '').split(',');
  for (const h of hosts) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(h)) {
      throw new Error(`bad etcd member ${JSON.stringify(h)} in ${JSON.stringify(spec)}: want HOST:PORT`);
    }
  }
  return hosts.map((h) => `http://${h}`);
}
