import { stat } from 'node:fs/promises';
import type { Logger } from '../internal/index.js';

/** DEFAULT_RELOAD_INTERVAL_MS is how often watched credential files are checked for a change. */
export const DEFAULT_RELOAD_INTERVAL_MS = 1_000;

/** FileWatch stops watching. */
export interface FileWatch {
  close(): void;
}

/**
 * watchFiles calls `onChange` when any of `paths` changes (its inode, size or
 * modification time). It polls with stat, which follows symbolic links, so the
 * `..data` swap a Kubernetes Secret volume does on update is seen too, where
 * inotify on the old target would go quiet. A failing `onChange` is logged and
 * retried on the next change.
 */
export function watchFiles(options: { paths: string[]; intervalMs?: number; logger: Logger; onChange(): Promise<void> | void }): FileWatch {
  const seen = new Map<string, string>();
  const signature = async (path: string): Promise<string> => {
    try {
      const s = await stat(path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (e) {
      return `missing:${(e as NodeJS.ErrnoException).code ?? ''}`;
    }
  };
  let busy = false;
  let primed = false;
  const tick = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      let changed = false;
      for (const p of options.paths) {
        const sig = await signature(p);
        if (seen.get(p) !== sig) changed = true;
        seen.set(p, sig);
      }
      if (changed && primed) await options.onChange();
      primed = true;
    } catch (e) {
      options.logger.warn('reloading credential files failed; the previous ones stay in use', { files: options.paths.join(','), error: (e as Error).message });
    } finally {
      busy = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), options.intervalMs ?? DEFAULT_RELOAD_INTERVAL_MS);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
