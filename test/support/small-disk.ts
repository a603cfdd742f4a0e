import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** SmallDisk is a tmpfs of a few MiB mounted for one test: a disk that fills up for real (ENOSPC, SQLITE_FULL). */
export interface SmallDisk {
  dir: string;
  /** fill grows a ballast file until about `leaveBytes` are left free. */
  fill(leaveBytes?: number): void;
  /** free removes the ballast. */
  free(): void;
  /** available is what the filesystem has left, in bytes. */
  available(): number;
  unmount(): void;
}

/** mountSmallDisk mounts a tmpfs of `sizeMiB` (the tests run as root, as CI does) on a fresh directory. */
export function mountSmallDisk(sizeMiB: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-small-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  const ballast = join(dir, 'ballast');
  const available = (): number => {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  };
  return {
    dir,
    available,
    fill(leaveBytes = 0) {
      const size = Math.max(0, available() - leaveBytes);
      try {
        appendFileSync(ballast, Buffer.alloc(size));
      } catch (e) {
        // Another process took some of the space meanwhile: the disk is as full as it gets.
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      }
    },
    free() {
      rmSync(ballast, { force: true });
    },
    unmount() {
      try {
        execFileSync('umount', ['-l', dir]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
