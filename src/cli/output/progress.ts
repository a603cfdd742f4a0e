import { colourEnabled } from './colour.js';

/** PROGRESS_DELAY_MS: a query that answers within this time shows no progress at all, so short commands stay quiet. */
export const PROGRESS_DELAY_MS = 400;
/** PROGRESS_INTERVAL_MS keeps redraws well under the terminal's refresh cost. */
const PROGRESS_INTERVAL_MS = 100;

/** Progress reports how much a long read has fetched. */
export interface Progress {
  /** update records the items read so far and redraws when it is time. */
  update(items: number): void;
  /** done erases the indicator. */
  done(): void;
}

/**
 * createProgress draws `<label> 12,345…` on standard error, only when it is a
 * terminal (and not with NO_COLOR's plain-output wish broken: the line is
 * erased, never left behind), and only once a read has taken a while.
 */
export function createProgress(options: { stream: NodeJS.WritableStream; env: NodeJS.ProcessEnv; label: string; now?: () => number }): Progress {
  const now = options.now ?? Date.now;
  const tty = (options.stream as { isTTY?: boolean }).isTTY === true && options.env.TERM !== 'dumb';
  const start = now();
  let lastDraw = 0;
  let drawn = false;
  const dim = colourEnabled(options.stream, options.env);
  return {
    update(items) {
      if (!tty) return;
      const t = now();
      if (t - start < PROGRESS_DELAY_MS || t - lastDraw < PROGRESS_INTERVAL_MS) return;
      lastDraw = t;
      drawn = true;
      const text = `${options.label} ${items.toLocaleString('en-US')}…`;
      options.stream.write(`\r${dim ? `\x1b[2m${text}\x1b[22m` : text}\x1b[K`);
    },
    done() {
      if (drawn) options.stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}
