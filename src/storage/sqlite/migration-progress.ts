import type { Logger } from '../../internal/index.js';

/** MigrationProgress reports a migration's progress: versions done so far of the total. */
export type MigrationProgress = (done: number, total: number) => void;

/** PROGRESS_EVERY is how many versions a migration goes through between two progress lines. */
const PROGRESS_EVERY = 1_000_000;

/** MigrationLog is what `migrationLog` hands a migration: its progress callback and its closing line. */
export interface MigrationLog {
  /** progress logs a line every PROGRESS_EVERY versions, not at the last (`finished` says it). */
  progress: MigrationProgress;
  /** finished logs the closing line with the time per million versions, unless there were none. */
  finished(total: number): void;
}

/**
 * migrationLog gives a migration over every stored version (building the search
 * index, filling in a new column) its progress lines on the logger (the CLI's
 * writes to stderr), so that opening a large archive the first time says what
 * it is doing rather than sitting silent for minutes. `unit` names what it counts (versions unless said).
 */
export function migrationLog(logger: Pick<Logger, 'info'>, messages: { progress: string; finished: string }, unit = 'versions'): MigrationLog {
  const started = performance.now();
  const seconds = (): number => Math.round(performance.now() - started) / 1000;
  let reported = 0;
  return {
    progress(done, total) {
      if (done - reported < PROGRESS_EVERY || done === total) return;
      reported = done;
      logger.info(messages.progress, { [unit]: done, of: total, seconds: seconds() });
    },
    finished(total) {
      if (total > 0) logger.info(messages.finished, { [unit]: total, seconds: seconds(), secondsPerMillion: Math.round((seconds() * 1e6) / total) });
    },
  };
}
