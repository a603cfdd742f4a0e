import type { Logger } from '../../internal/index.js';

/** untilSignal resolves at the first SIGINT or SIGTERM, for long-running commands to shut down cleanly. */
export function untilSignal(logger: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info('shutting down', { signal });
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve();
    };
    const onInt = (): void => stop('SIGINT');
    const onTerm = (): void => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
}
