// The composition root's choice of storage backend, shared by serve and mirror. It is apart from flags/storage.ts
// (which only parses --storage) so that the flag tables never reach the storage classes.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Clock, Logger } from '../../internal/index.js';
import type { EventStore } from '../../storage/index.js';
import type { SqliteEventStoreOptions } from '../../storage/sqlite/index.js';
import { CliError, UsageError } from '../errors.js';
import type { StorageSpec } from '../flags/storage.js';
import { withPasswordHint } from '../flags/storage-password.js';

/**
 * openStore is the composition root's choice of backend: the one place that
 * names concrete storage classes. Backends load lazily so that a command that
 * does not need SQLite does not load its native module.
 */
export async function openStore(
  spec: StorageSpec,
  deps: {
    clock: Clock;
    logger: Logger;
    historyWindowSeconds?: number;
    compactIntervalMs?: number;
    sqliteCacheMiB?: number;
    /** sqlite joins a SQLite store to others on its file (`kevents serve --workers`): a writer's `onCommit`, or a follower's `writer`. */
    sqlite?: Pick<SqliteEventStoreOptions, 'writer' | 'onCommit'>;
    /** writerThread commits a SQLite store's writes on a thread of their own (see openSqliteWithWriterThread). */
    writerThread?: boolean;
  },
): Promise<EventStore> {
  switch (spec.kind) {
    case 'memory': {
      const { MemoryEventStore } = await import('../../storage/memory/index.js');
      return new MemoryEventStore({ clock: deps.clock, logger: deps.logger, ...window(deps) });
    }
    case 'sqlite': {
      const path = resolve(spec.path);
      mkdirSync(dirname(path), { recursive: true });
      const { SqliteEventStore, openSqliteWithWriterThread } = await import('../../storage/sqlite/index.js');
      const options: SqliteEventStoreOptions = {
        path,
        clock: deps.clock,
        logger: deps.logger,
        ...window(deps),
        ...(deps.sqliteCacheMiB !== undefined ? { cacheSizeMiB: deps.sqliteCacheMiB } : {}),
        ...deps.sqlite,
      };
      // A file SQLite cannot open or finds damaged is refused here, in one line, rather than served as errors (or as an empty archive).
      let store: InstanceType<typeof SqliteEventStore> | undefined;
      try {
        store = deps.writerThread === true ? await openSqliteWithWriterThread(options) : new SqliteEventStore(options);
        await store.ready();
      } catch (e) {
        await store?.close();
        throw new CliError((e as Error).message, { cause: e });
      }
      return store;
    }
    case 'postgres': {
      const { PostgresEventStore } = await import('../../storage/postgres/index.js');
      const store = new PostgresEventStore({ connectionString: spec.url, clock: deps.clock, logger: deps.logger, ...window(deps) });
      // A database that refuses the login, or is not there, is refused here in one line, as a SQLite file is.
      try {
        await store.ready();
      } catch (e) {
        await store.close();
        throw new CliError(withPasswordHint((e as Error).message), { cause: e });
      }
      return store;
    }
    case 'etcd': {
      const { EtcdEventStore, etcdEndpointsFromUrl } = await import('../../storage/etcd/index.js');
      let endpoints: string[];
      try {
        endpoints = etcdEndpointsFromUrl(spec.url);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      return new EtcdEventStore({ endpoints, clock: deps.clock, logger: deps.logger, ...window(deps) });
    }
  }
}

function window(deps: { historyWindowSeconds?: number; compactIntervalMs?: number }): { historyWindowSeconds?: number; compactIntervalMs?: number } {
  return {
    ...(deps.historyWindowSeconds === undefined ? {} : { historyWindowSeconds: deps.historyWindowSeconds }),
    ...(deps.compactIntervalMs === undefined ? {} : { compactIntervalMs: deps.compactIntervalMs }),
  };
}
