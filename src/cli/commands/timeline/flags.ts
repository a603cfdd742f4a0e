// The flags of `kevents timeline`, apart from timeline.ts so that the read table adds them without loading the
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

/** TimelineFlags are the flags of `kevents timeline`. */
export interface TimelineFlags extends ReadConnectionFlags {
  for?: string;
  since?: string;
  sinceTime?: string;
  until?: string;
  types?: string[];
  output?: string;
  /** archive false (`--no-archive`) reads events only, spreading counts even where the archive keeps occurrences. */
  archive?: boolean;
  /** cluster keeps what was archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
  /** expand prints one table row per occurrence, not one per run of an event's repeats. */
  expand?: boolean;
}

/** addTimelineFlags adds the options of `kevents timeline` (read into TimelineFlags by parseTimelineFlags) to its command. */
export function addTimelineFlags(c: Command, io: CliIO): Command {
  return withConnection(
    addWindowFlags(
      c
        .option('--for <kind/name>', 'the object, with what it owns (Deployment → ReplicaSets → Pods) and its pods\' nodes')
        .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
        .option('-A, --all-namespaces', 'every namespace'),
    )
      .option('--types <types>', 'only these types: Normal, Warning (repeat or separate with commas)', collect)
      .option('--cluster <name>', 'only what was archived from this cluster (repeat for several)', collect)
      .option('--no-archive', 'read events only: spread repeats from their counts even where the archive keeps occurrences')
      .option('--expand', 'the table: one row per occurrence, rather than one per run of an event\'s repeats (x14 over 28m)')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'markdown', 'csv', 'json']).default('table')),
    io,
  );
}

/** TIMELINE_FLAGS names the kind of each flag of TimelineFlags. */
const TIMELINE_FLAGS: FlagSpec<TimelineFlags> = { for: 'string', since: 'string', sinceTime: 'string', until: 'string', types: 'strings', output: 'string', archive: 'boolean', cluster: 'strings', expand: 'boolean' };

/** parseTimelineFlags reads commander's options of `kevents timeline` into TimelineFlags. */
export function parseTimelineFlags(opts: CommanderOptions): TimelineFlags {
  return parseFlags(TIMELINE_FLAGS, opts);
}
