import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { EventStore } from '../event-store.js';
import { runEventStoreConformance } from '../testing/index.js';
import { SqliteEventStore } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const paths = new WeakMap<EventStore, string>();
let n = 0;

runEventStoreConformance('sqlite', {
  create: (env) => {
    const path = join(dir, `store-${n++}.db`);
    const store = new SqliteEventStore({ path, ...env.options });
    paths.set(store, path);
    return Promise.resolve(store);
  },
  destroy: async (store) => {
    await store.close();
    const path = paths.get(store)!;
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  },
  reopen: (closed, env) => {
    const path = paths.get(closed)!;
    const store = new SqliteEventStore({ path, ...env.options });
    paths.set(store, path);
    return Promise.resolve(store);
  },
});
