// The flags of `kevents events`, apart from events.ts so that the read table adds them without loading the command.
import type { Command } from 'commander';
import type { ReadConnectionFlags } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import { collect } from '../../flags/collect.js';
import { parseFlags, withConnection } from '../../read/read-flags.js';
import type { CommanderOptions, FlagSpec } from '../../read/read-flags.js';

/** EventsFlags are the flags of `kevents events`, kubectl events' own. */
export interface EventsFlags extends ReadConnectionFlags {
  for?: string;
  types?: string[];
  watch?: boolean;
  output?: string;
  noHeaders?: boolean;
  chunkSize?: string;
  /** cluster keeps the events archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
}

/** addEventsFlags adds the options of `kevents events` (read into EventsFlags by parseEventsFlags) to its command. */
export function addEventsFlags(c: Command, io: CliIO): Command {
  return withConnection(
    c
      .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
      .option('-A, --all-namespaces', 'list events of every namespace')
      .option('--for <kind/name>', 'only events about this object, e.g. pod/web-1')
      .option('--types <types>', 'only events of these types: Normal, Warning (repeat or separate with commas)', collect)
      .option('--cluster <name>', 'only events archived from this cluster (repeat for several; a CLUSTER column shows when the answer spans several)', collect)
      .option('-w, --watch', 'watch for new events after listing')
      .option('-o, --output <format>', 'json, yaml or name')
      .option('--no-headers', 'print no header row')
      .option('--chunk-size <n>', 'accepted for kubectl compatibility; lists always read 500 a page', '500'),
    io,
  );
}

/** EVENTS_FLAGS names the kind of each flag of EventsFlags. */
const EVENTS_FLAGS: FlagSpec<EventsFlags> = { for: 'string', types: 'strings', watch: 'boolean', output: 'string', chunkSize: 'string', cluster: 'strings' };

/** parseEventsFlags reads commander's options of `kevents events` into EventsFlags. */
export function parseEventsFlags(opts: CommanderOptions): EventsFlags {
  return parseFlags(EVENTS_FLAGS, opts);
}
