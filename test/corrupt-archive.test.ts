import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { runBuiltCli } from './support/cli-process.js';
import { request } from './support/http.js';
import { startServer } from './support/server-process.js';

/**
 * A damaged archive file is refused at start: `kevents serve`, `kevents mirror`
 * and `kevents export` each exit 1 with one line naming the file and SQLite's
 * own message, and leave the file as it was; nothing starts on it as if empty.
 * The archive is a real one written by `kevents serve`; the damage is what a
 * disk or an operator does to it: the file cut short, one page in the middle
 * overwritten, the header overwritten, the file cut to nothing.
 */

const EVENTS = 1_500;
const PAGE = 4096;

void describe('a corrupt archive file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-corrupt-'));
  const archive = join(dir, 'events.db');
  const config = join(dir, 'export.yaml');
  after(() => rmSync(dir, { recursive: true, force: true }));

  before(async () => {
    const server = await startServer(['--storage', `sqlite:${archive}`]);
    try {
      for (let i = 0; i < EVENTS; i += 100) {
        const batch = Array.from({ length: 100 }, (_, j) =>
          request(server.url, 'POST', '/api/v1/namespaces/default/events', {
            metadata: { name: `e-${i + j}` },
            involvedObject: { kind: 'Pod', namespace: 'default', name: `web-${i + j}` },
            reason: 'BackOff',
            message: `back-off ${'x'.repeat(200)} ${i + j}`,
            type: 'Warning',
          }),
        );
        for (const r of await Promise.all(batch)) assert.equal(r.status, 201, r.text);
      }
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
    writeFileSync(config, `sinks:\n  - name: lines\n    type: file\n    path: ${join(dir, 'out.jsonl')}\n`);
  });

  /** damaged copies the archive and applies one kind of damage to the copy. */
  function damaged(name: string, damage: (path: string, size: number) => void): string {
    const path = join(dir, `${name}.db`);
    copyFileSync(archive, path);
    damage(path, statSync(path).size);
    return path;
  }

  function overwrite(path: string, offset: number, length: number): void {
    const fd = openSync(path, 'r+');
    try {
      writeSync(fd, Buffer.alloc(length, 0xa5), 0, length, offset);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * middleEventPage is the page number of the middle page of the events' table: a page the archive uses. The middle
   * page of the file may be a free one (the search index's catch-up and merges free pages), whose damage loses
   * nothing and which no open can or should notice.
   */
  function middleEventPage(path: string): number {
    const db = new Database(path, { readonly: true });
    try {
      const pages = db.prepare<[], { pageno: number }>("SELECT pageno FROM dbstat WHERE name = 'versions' ORDER BY pageno").all();
      return pages[Math.floor(pages.length / 2)]!.pageno;
    } finally {
      db.close();
    }
  }

  /**
   * A case's message; `checked` when the damage may instead be found by the open's quick_check, which names what it
   * found after the message (a page in the middle of the file may be one SQLite opens fine and only the check reads).
   */
  const cases: { name: string; damage: (path: string, size: number) => void; message: string; checked?: true }[] = [
    { name: 'truncated', damage: (p, size) => truncateSync(p, Math.floor(size / PAGE / 2) * PAGE + 1234), message: 'database disk image is malformed' },
    { name: 'page-overwritten', damage: (p) => overwrite(p, (middleEventPage(p) - 1) * PAGE, PAGE), message: 'database disk image is malformed', checked: true },
    { name: 'header-overwritten', damage: (p) => overwrite(p, 0, 100), message: 'file is not a database' },
    { name: 'emptied', damage: (p) => truncateSync(p, 0), message: 'the file is empty (0 bytes): not an archive; remove it to start a new one' },
  ];

  for (const c of cases) {
    void it(`refuses the ${c.name} file in serve, mirror and export`, { timeout: 120_000 }, async () => {
      const path = damaged(c.name, c.damage);
      const bytes = readFileSync(path);
      const commands = [
        ['serve', '--listen', '127.0.0.1:0', '--storage', `sqlite:${path}`],
        // The source is never reached: the archive is opened first.
        ['mirror', '--source', 'http://127.0.0.1:9', '--to', `sqlite:${path}`, '--listen', '127.0.0.1:0'],
        ['export', '--config', config, '--from', `sqlite:${path}`, '--listen', '127.0.0.1:0'],
      ];
      for (const args of commands) {
        const run = await runBuiltCli(args);
        assert.equal(run.code, 1, `${args[0]}: ${run.stdout}${run.stderr}`);
        assert.equal(run.stdout, '', `${args[0]} printed a banner`);
        const said = `error: cannot open the archive ${path}: ${c.message}`;
        if (c.checked === true && run.stderr.startsWith(`${said} (quick_check: `)) {
          assert.match(run.stderr, /^[^\n]*\)\n$/, `${args[0]}: one line, the check's findings closing it`);
        } else {
          assert.equal(run.stderr, `${said}\n`, `${args[0]}`);
        }
        assert.ok(readFileSync(path).equals(bytes), `${args[0]} changed the damaged file`);
      }
    });
  }

  void it('opens the undamaged archive with every event', { timeout: 60_000 }, async () => {
    const path = damaged('intact', () => undefined);
    const server = await startServer(['--storage', `sqlite:${path}`]);
    try {
      const list = await request(server.url, 'GET', '/api/v1/events');
      assert.equal(list.status, 200);
      assert.equal(list.json.items.length, EVENTS);
    } finally {
      await server.stop();
    }
  });
});
