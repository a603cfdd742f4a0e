// The flags of `kevents incidents`, apart from incidents.ts so that the read table adds them without loading the
// command.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import { requireCjs } from '../../../internal/index.js';
import type { ReadConnectionFlags } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import { collect } from '../../flags/collect.js';
import { parseFlags, withConnection } from '../../read/read-flags.js';
import type { CommanderOptions, FlagSpec } from '../../read/read-flags.js';
import { addWindowFlags } from '../../read/window.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** IncidentsFlags are the flags of `kevents incidents`. */
export interface IncidentsFlags extends ReadConnectionFlags {
  since?: string;
  sinceTime?: string;
  until?: string;
  /** lookBack is how long before the window the archive is read for causes, roots and starts (`--look-back`, default 24h). */
  lookBack?: string;
  output?: string;
  /** cluster keeps what was archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
}

/** addIncidentsFlags adds the options of `kevents incidents` (read into IncidentsFlags by parseIncidentsFlags) to its command. */
export function addIncidentsFlags(c: Command, io: CliIO): Command {
  return withConnection(
    addWindowFlags(c.option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)').option('-A, --all-namespaces', 'every namespace'), {
      since: 'only the last duration, e.g. 24h or 30m',
    })
      .option('--look-back <duration>', 'how long before the window to read the archive for causes, owners and starts of the incidents active in it (0 to 7d)', '24h')
      .option('--cluster <name>', 'only what was archived from this cluster (repeat for several)', collect)
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'markdown']).default('table')),
    io,
  );
}

/** INCIDENTS_FLAGS names the kind of each flag of IncidentsFlags. */
const INCIDENTS_FLAGS: FlagSpec<IncidentsFlags> = { since: 'string', sinceTime: 'string', until: 'string', lookBack: 'string', output: 'string', cluster: 'strings' };

/** parseIncidentsFlags reads commander's options of `kevents incidents` into IncidentsFlags. */
export function parseIncidentsFlags(opts: CommanderOptions): IncidentsFlags {
  return parseFlags(INCIDENTS_FLAGS, opts);
}
