import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { legacyEvent, request } from './support/http.js';
import { mirrorMetric, startMirror, stopMirror, untilListed } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { startServer } from './support/server-process.js';
import { mountSmallDisk } from './support/small-disk.js';
import type { SmallDisk } from './support/small-disk.js';
import { sleep } from './support/wait.js';

/**
 * `--max-size` keeps a mirror from filling a small disk on its own: `kevents
 * mirror` into an SQLite archive on a 48 MiB tmpfs with `--max-size 8MB`, fed
 * by a sustained workload that writes several times the disk's size in events
 * and their repeats. The disk never fills: no write of the mirror is refused,
 * `/readyz` stays ok, the archive's pages in use are held near the cap, and
 * the file passes `PRAGMA integrity_check`.
 */

const DISK_MIB = 48;
const CAP = 8_000_000;
/** RUN_MS is how long the workload runs at least: long enough to write several times the disk (see the diagnostic). */
const RUN_MS = Number(process.env.KEVENTS_MAX_SIZE_RUN_MS ?? 240_000);
/**
 * MUST_WRITE is what the workload writes before it stops, however long that takes: on a busy
 * machine a second of writes takes longer than a second, and a run that never wrote more than
 * the disk would prove nothing. It goes on for at most twice RUN_MS.
 */
const MUST_WRITE = 2.2 * DISK_MIB * 2 ** 20;
/** RATE is the changes a second the workload makes at the source. */
const RATE = 40;
/** MESSAGE_CHARS is the size of each change's message: random bytes in base64, which the archive's LZ77 codec cannot shrink. */
const MESSAGE_CHARS = 12_000;
/**
 * MARGIN is how far past the cap the file may grow: what 5 s of writes hold in
 * their messages, twice. The mirror enforces its cap every 5 s (SIZE_INTERVAL_MS)
 * and reads its size every second between (SIZE_CHECK_MS), cutting once it has
 * passed the cap; what arrives until then is stored, with its search index (for
 * these messages, every word new, more bytes than the messages), and FTS5's
 * merges need room while they run. Two and a half times allows for checks run
 * late on a loaded machine: alone the file peaks at the cap plus 3.7-3.8 MB,
 * and in the full suite (three files at once) it reached the cap plus 4.9 MB,
 * 5.1 s of these messages.
 */
const MARGIN = 2.5 * 5 * RATE * MESSAGE_CHARS;

function payload(): string {
  return randomBytes((MESSAGE_CHARS / 4) * 3).toString('base64');
}

/** fileBytes is the size of a file, 0 when it does not exist (yet). */
function fileBytes(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

/** used is the size of an SQLite file's pages in use (free pages excluded), as the size cap measures it. */
function used(path: string): { used: number; file: number; integrity: unknown } {
  const db = new Database(path, { readonly: true });
  try {
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const pages = db.pragma('page_count', { simple: true }) as number;
    const free = db.pragma('freelist_count', { simple: true }) as number;
    return { used: (pages - free) * pageSize, file: statSync(path).size, integrity: db.pragma('integrity_check') };
  } finally {
    db.close();
  }
}

void describe('--max-size on a small disk', () => {
  const disks: SmallDisk[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'kevents-max-size-'));
  after(() => {
    for (const d of disks) d.unmount();
    rmSync(scratch, { recursive: true, force: true });
  });

  void it('keeps a mirror under a sustained workload from ever filling the disk', {
      timeout: 2 * RUN_MS + 300_000,
    },
    async (t) => {
    const disk = mountSmallDisk(DISK_MIB);
    disks.push(disk);
    const db = join(disk.dir, 'archive.db');
    const source = await startServer(['--storage', `sqlite:${join(scratch, 'source.db')}`, '--event-ttl', '0']);
    let mirror: MirrorProcess | undefined;
    try {
      mirror = await startMirror(source.url, `sqlite:${db}`, ['--max-size', String(CAP)]);
      const m = mirror;
      await untilListed(m);
      let written = 0;
      let bytes = 0;
      let leastFree = disk.available();
      // The file never shrinks (its free pages are reused), so its size is the most pages it ever used.
      let mostWal = 0;
      const notReady: string[] = [];
      let n = 0;
      const started = Date.now();
      // Each second: new events, and repeats of the last ones (each repeat is an occurrence and a new version).
      const more = (): boolean => Date.now() - started < RUN_MS || (bytes < MUST_WRITE && Date.now() - started < 2 * RUN_MS);
      while (more()) {
        const second = Date.now();
        const before = n;
        const writes = Array.from({ length: RATE }, (_, i) => {
          const repeat = i % 2 === 1 && before > 20;
          const name = repeat ? `e-${before - 1 - (i % 20)}` : `e-${n++}`;
          const message = payload();
          bytes += message.length;
          return repeat
            ? request(source.url, 'PATCH', `/api/v1/namespaces/default/events/${name}`, { count: written + i, message, lastTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }, { 'Content-Type': 'application/merge-patch+json' })
            : request(source.url, 'POST', '/api/v1/namespaces/default/events', legacyEvent({ name, object: `${name}-pod`, reason: 'BackOff', message, type: 'Warning', firstAgo: 5, lastAgo: 5 }));
        });
        for (const r of await Promise.all(writes)) assert.ok(r.status === 200 || r.status === 201, r.text);
        written += RATE;
        leastFree = Math.min(leastFree, disk.available());
        mostWal = Math.max(mostWal, fileBytes(`${db}-wal`));
        const ready = await fetch(`${m.metricsUrl}/readyz`);
        if (ready.status !== 200) notReady.push((await ready.text()).split('\n').find((l) => l.startsWith('[-]')) ?? String(ready.status));
        await sleep(Math.max(0, 1000 - (Date.now() - second)));
      }
      const occurrences = await mirrorMetric(m, 'kevents_mirror_occurrences_written_total');
      await stopMirror(mirror, 'SIGTERM');
      mirror = undefined;
      const end = used(db);
      t.diagnostic(
        `${written} changes (${(bytes / 1e6).toFixed(0)} MB of messages) in ${Math.round((Date.now() - started) / 1000)} s on a ${DISK_MIB} MiB disk with --max-size ${CAP / 1e6} MB: ` +
          `${occurrences} occurrences mirrored; least free ${(leastFree / 2 ** 20).toFixed(1)} MiB; at the end ${(end.used / 1e6).toFixed(1)} MB of pages in use, ` +
          `a ${(end.file / 1e6).toFixed(1)} MB file (the most it used; the cap plus ${((end.file - CAP) / 1e6).toFixed(1)} MB, the margin ${(MARGIN / 1e6).toFixed(1)} MB), ` +
          `the WAL at most ${(mostWal / 1e6).toFixed(1)} MB`,
      );
      assert.ok(bytes > 2 * DISK_MIB * 2 ** 20, 'the workload wrote more than twice the disk');
      assert.deepEqual(notReady.slice(0, 3), [], 'the mirror stayed ready');
      assert.doesNotMatch(m.output(), /disk is full|no space left|ENOSPC|NoSpace|SQLITE_FULL/i);
      assert.ok(leastFree > 0, 'the disk never filled');
      assert.deepEqual(end.integrity, [{ integrity_check: 'ok' }]);
      assert.ok(end.used <= CAP + MARGIN, `the archive is held near its cap (${end.used} bytes in use at the end)`);
      assert.ok(end.file <= CAP + MARGIN, `the file never grew past the cap and its margin (${end.file} bytes)`);
    } finally {
      if (mirror !== undefined) await stopMirror(mirror, 'SIGKILL');
      await source.stop();
    }
  });
});
