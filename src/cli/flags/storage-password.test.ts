import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { parseStorageSpec } from './storage.js';
import { withPasswordHint, withStoragePassword } from './storage-password.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-storage-password-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
};

function run(url: string, passwordFile: string | undefined): { url: string | undefined; warnings: string[] } {
  const warnings: string[] = [];
  const spec = withStoragePassword(parseStorageSpec(url), { urlFlag: '--to', file: passwordFile, warn: (l) => warnings.push(l) });
  return { url: spec.kind === 'postgres' ? spec.url : undefined, warnings };
}

void describe('withStoragePassword', () => {
  // What the driver reads out of the URL the store is given: the password as written in the file.
  const cases: [string, string, string][] = [
    ['one trailing newline is dropped', 'pw\n', 'pw'],
    ['a Windows line end too', 'pw\r\n', 'pw'],
    ['no newline at all', 'pw', 'pw'],
    ['spaces are the password\'s', ' p w ', ' p w '],
    ['URL syntax survives', 'a@b:c/d?e#f%41%', 'a@b:c/d?e#f%41%'],
    ['non-ASCII survives', 'pässwörd✓', 'pässwörd✓'],
  ];
  for (const [name, text, password] of cases) {
    void it(name, () => {
      const r = run('postgres://kevents@db.example:5432/kevents?schema=k', file(`${name}.txt`, text));
      assert.deepEqual(r.warnings, []);
      // A client the driver makes of the URL (no connection is opened): what it would log in with.
      const client = new pg.Client({ connectionString: r.url! });
      assert.equal(client.password, password);
      assert.deepEqual([client.user, client.host, client.port, client.database], ['kevents', 'db.example', 5432, 'kevents']);
    });
  }

  void it('a URL without a password and no file is left as given, for PGPASSWORD or PGPASSFILE', () => {
    assert.deepEqual(run('postgres://kevents@db/kevents', undefined), { url: 'postgres://kevents@db/kevents', warnings: [] });
  });

  void it('a password in the URL still works, with one warning that names the safer ways', () => {
    const r = run('postgres://kevents:s3cret@db/kevents', undefined);
    assert.equal(r.url, 'postgres://kevents:s3cret@db/kevents');
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /^warning: the password in the --to URL is visible in process listings; give it with --storage-password-file FILE, PGPASSWORD or a PGPASSFILE/);
    assert.doesNotMatch(r.warnings[0]!, /s3cret/);
  });

  void it('refuses a password both in the URL and in a file, a file for storage that takes none, and a file it cannot use', () => {
    const pw = file('pw', 'pw\n');
    assert.throws(() => run('postgres://kevents:other@db/kevents', pw), { name: 'UsageError', message: /--to carries a password and --storage-password-file gives another/ });
    assert.throws(() => run('sqlite:x.db', pw), { name: 'UsageError', message: /--storage-password-file is the password of a postgres:\/\/ --to; sqlite storage takes none/ });
    assert.throws(() => run('postgres://kevents@db/kevents', join(dir, 'missing')), { name: 'CliError', message: /--storage-password-file: cannot read .*missing: ENOENT/ });
    assert.throws(() => run('postgres://kevents@db/kevents', file('empty', '\n')), { name: 'CliError', message: /is empty/ });
    assert.throws(() => run('postgres://kevents@db/kevents', file('two', 'a\nb\n')), { name: 'CliError', message: /more than one line/ });
  });
});

void describe('withPasswordHint', () => {
  void it('names the ways to give a password only where the database asked for one that was not given', () => {
    assert.equal(
      withPasswordHint('cannot open postgres store: postgres: SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
      'cannot open postgres store: postgres: SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string (the database asks for a password: give it with --storage-password-file FILE, PGPASSWORD or a PGPASSFILE (~/.pgpass) entry)',
    );
    for (const other of ['postgres: password authentication failed for user "kevents"', 'postgres: connect ECONNREFUSED 127.0.0.1:5432']) assert.equal(withPasswordHint(other), other);
  });
});
