import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Clock, Logger } from '../internal/index.js';
import type { EventStore } from '../storage/index.js';
import { UsageError } from './errors.js';

/** StorageSpec is a parsed `--storage` value. */
export type StorageSpec = { kind: 'memory' } | { kind: 'sqlite'; path: string };

/** DEFAULT_STORAGE is where `kevents serve` keeps events when not told otherwise. */
export const DEFAULT_STORAGE = 'sqlite:.kevents/events.db';

/** parseStorageSpec reads `memory:` or `sqlite:PATH`. */
export function parseStorageSpec(text: string): StorageSpec {
  if (text === 'memory:' || text === 'memory') return { kind: 'memory' };
  if (text.startsWith('sqlite:')) {
    const path = text.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new UsageError('--storage sqlite: needs a file path, e.g. sqlite:.kevents/events.db');
    return { kind: 'sqlite', path };
  }
  throw new UsageError(`unsupported --storage ${JSON.stringify(text)}: use memory: or sqlite:PATH`);
}

/** describeStorage prints a spec back for messages. */
export function describeStorage(spec: StorageSpec): string {
  return spec.kind === 'memory' ? 'memory: (nothing is kept after exit)' : `sqlite:${spec.path}`;
}

/**
 * openStore is the composition root's choice of backend: the one place that
 * names concrete storage classes. Backends load lazily so that a command that
 * does not need SQLite does not load its native module.
 */
export async function openStore(
  spec: StorageSpec,
  deps: { clock: Clock; logger: Logger; historyWindowSeconds?: number; compactIntervalMs?: number },
): Promise<EventStore> {
  switch (spec.kind) {
    case 'memory': {
      const { MemoryEventStore } = await import('../storage/memory/index.js');
      return new MemoryEventStore({ clock: deps.clock, logger: deps.logger, ...window(deps) });
    }
    case 'sqlite': {
      const path = resolve(spec.path);
      mkdirSync(dirname(path), { recursive: true });
      const { SqliteEventStore } = await import('../storage/sqlite/index.js');
      return new SqliteEventStore({ path, clock: deps.clock, logger: deps.logger, ...window(deps) });
    }
  }
}

function window(deps: { historyWindowSeconds?: number; compactIntervalMs?: number }): { historyWindowSeconds?: number; compactIntervalMs?: number } {
  return {
    ...(deps.historyWindowSeconds === undefined ? {} : { historyWindowSeconds: deps.historyWindowSeconds }),
    ...(deps.compactIntervalMs === undefined ? {} : { compactIntervalMs: deps.compactIntervalMs }),
  };
}
