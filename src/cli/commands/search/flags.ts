// The flags of `kevents search`, apart from search.ts so that the read table adds them without loading the command.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import { requireCjs } from '../../../internal/index.js';
import type { ReadConnectionFlags } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import { collect } from '../../flags/collect.js';
import { parseFlags, withConnection } from '../../read/read-flags.js';
import type { CommanderOptions, FlagSpec } from '../../read/read-flags.js';
import { addWindowFlags } from '../../read/window.js';
import { SEARCH_HELP } from './help.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** SearchFlags are the flags of `kevents search`. */
export interface SearchFlags extends ReadConnectionFlags {
  since?: string;
  sinceTime?: string;
  until?: string;
  /** cluster keeps the hits archived from one cluster (`--cluster`). */
  cluster?: string[];
  /** limit caps the hits printed (default 100; 0 prints every hit). */
  limit?: string;
  /** chunkSize is the page each request asks for, as `kubectl get --chunk-size`. */
  chunkSize?: string;
  output?: string;
  noHeaders?: boolean;
}

/** addSearchFlags adds the options of `kevents search` (read into SearchFlags by parseSearchFlags) and its query guide. */
export function addSearchFlags(c: Command, io: CliIO): Command {
  return withConnection(
    addWindowFlags(c.option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)').option('-A, --all-namespaces', 'every namespace'), {
      since: 'only events that last happened in the last duration, e.g. 7d or 2h',
      sinceTime: 'only events that last happened from this RFC 3339 time',
      until: 'only events that last happened before this RFC 3339 time',
    })
      .option('--cluster <name>', 'only events archived from this cluster', collect)
      .option('--limit <n>', 'print at most this many hits, newest first (0: all)', '100')
      .option('--chunk-size <n>', 'read in pages of this size', '500')
      .option('--no-headers', 'print no header row')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'wide', 'json', 'yaml']).default('table'))
      .addHelpText('after', SEARCH_HELP),
    io,
  );
}

/** SEARCH_FLAGS names the kind of each flag of SearchFlags. */
const SEARCH_FLAGS: FlagSpec<SearchFlags> = { since: 'string', sinceTime: 'string', until: 'string', cluster: 'strings', limit: 'string', chunkSize: 'string', output: 'string' };

/** parseSearchFlags reads commander's options of `kevents search` into SearchFlags. */
export function parseSearchFlags(opts: CommanderOptions): SearchFlags {
  return parseFlags(SEARCH_FLAGS, opts);
}
