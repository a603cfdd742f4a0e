// The flags of `kevents archive stats`, apart from stats.ts so that the command table can add them without loading
// the storage backends.
import type { Command } from 'commander';
import { DEFAULT_STORAGE } from '../../flags/storage.js';
import { STORAGE_PASSWORD_FILE_FLAG, storagePasswordHelp } from '../../flags/storage-password.js';

/** addArchiveStatsFlags adds the options of `kevents archive stats` (read into ArchiveStatsFlags) to its command. */
export function addArchiveStatsFlags(c: Command): Command {
  return c
    .option('--storage <spec>', 'the archive to measure: sqlite:PATH or postgres://USER@HOST:PORT/DB[?schema=NAME]', DEFAULT_STORAGE)
    .option(`${STORAGE_PASSWORD_FILE_FLAG} <path>`, storagePasswordHelp('--storage'))
    .option('--retention <duration>', 'also estimate what a retention of this age would remove (e.g. 30d, 720h)')
    .option('-o, --output <format>', 'table or json', 'table');
}
