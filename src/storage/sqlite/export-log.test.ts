import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isStorageError } from '../errors.js';
import { runExportLogConformance } from '../testing/index.js';
import { SqliteEventStore, SqliteExportLog } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-export-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

runExportLogConformance('sqlite', {
  create: () => {
    const path = join(dir, `a${n++}.db`);
    const store = new SqliteEventStore({ path });
    const logs: SqliteExportLog[] = [];
    return Promise.resolve({
      store,
      openLog: (now) => {
        const log = new SqliteExportLog({ path, now });
        logs.push(log);
        return Promise.resolve(log);
      },
      destroy: async () => {
        for (const l of logs) await l.close();
        await store.close();
        rmSync(path, { force: true });
      },
    });
  },
});

void describe('SqliteExportLog', () => {
  void it('opens only a file that holds an archive', () => {
    assert.throws(() => new SqliteExportLog({ path: join(dir, 'missing.db') }), (e) => isStorageError(e, 'Unreachable'));
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    assert.throws(
      () => new SqliteExportLog({ path: empty }),
      (e) => isStorageError(e, 'Unreachable') && /the file is empty \(0 bytes\)/.test((e as Error).message),
    );
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE unrelated (x)');
    db.close();
    assert.throws(
      () => new SqliteExportLog({ path: other }),
      (e) => isStorageError(e, 'Unreachable') && /holds no archive/.test((e as Error).message),
    );
  });
});
