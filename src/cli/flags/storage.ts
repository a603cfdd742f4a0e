// The parsing of --storage (and the storage defaults the flag tables print). Opening the store it names is
// daemon/open-store.ts's: this file stays light enough for the command table to import.
import { UsageError } from '../errors.js';

/** StorageSpec is a parsed `--storage` value. */
export type StorageSpec =
  | { kind: 'memory' }
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string }
  | { kind: 'etcd'; url: string };

/** DEFAULT_STORAGE is where `kevents serve` keeps events when not told otherwise. */
export const DEFAULT_STORAGE = 'sqlite:.kevents/events.db';

/**
 * MIRROR_CACHE_MIB is the SQLite page cache of `kevents mirror`: its writes go
 * mostly to the ends of its indexes and it serves no lists, so 8 MiB holds what
 * it rereads, where `serve` keeps the store's default for its lists.
 */
export const MIRROR_CACHE_MIB = 8;

/** parseStorageSpec reads `memory:`, `sqlite:PATH`, `postgres://…` or `etcd://HOST:PORT[,HOST:PORT…]`. */
export function parseStorageSpec(text: string): StorageSpec {
  if (text === 'memory:' || text === 'memory') return { kind: 'memory' };
  if (text.startsWith('sqlite:')) {
    const path = text.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new UsageError('--storage sqlite: needs a file path, e.g. sqlite:.kevents/events.db');
    return { kind: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//.test(text)) return { kind: 'postgres', url: text };
  if (text.startsWith('etcd://')) return { kind: 'etcd', url: text };
  throw new UsageError(
    `unsupported --storage ${JSON.stringify(text)}: use memory:, sqlite:PATH, postgres://USER@HOST:PORT/DB or etcd://HOST:PORT[,HOST:PORT...]`,
  );
}

/** describeStorage prints a spec back for messages. */
export function describeStorage(spec: StorageSpec): string {
  switch (spec.kind) {
    case 'memory':
      return 'memory: (nothing is kept after exit)';
    case 'sqlite':
      return `sqlite:${spec.path}`;
    case 'postgres': {
      // Never print a password.
      const u = new URL(spec.url);
      if (u.password !== '') u.password = '***';
      return u.toString();
    }
    case 'etcd':
      return spec.url;
  }
}

/**
 * StorageAlias is an older name of `--storage` a command still accepts (`mirror --to`, `export --from`): hidden
 * from its help, documented in docs/cli.md, refused together with `--storage`.
 */
export interface StorageAlias {
  /** flag is the older name, e.g. `--to`. */
  flag: string;
  /** value is what it was given, if it was. */
  value: string | undefined;
}

/**
 * storageFlagValue is the one storage URL a command was given: `--storage`, or its older name, or `fallback`
 * (undefined: the flag is required).
 */
export function storageFlagValue(storage: string | undefined, alias: StorageAlias, fallback?: string): string {
  const given = (v: string | undefined): v is string => v !== undefined && v !== '';
  if (given(storage) && given(alias.value)) throw new UsageError(`--storage and ${alias.flag} name the same archive (${alias.flag} is its older name): give one`);
  const value = given(storage) ? storage : given(alias.value) ? alias.value : fallback;
  if (value === undefined) throw new UsageError("required option '--storage <spec>' not specified");
  return value;
}
