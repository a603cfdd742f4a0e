// The flags of `kevents get events`, apart from get-events.ts so that the read table adds them without loading the
// command.
import type { Command } from 'commander';
import type { ReadConnectionFlags } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import { collect } from '../../flags/collect.js';
import { parseFlags, withConnection } from '../../read/read-flags.js';
import type { CommanderOptions, FlagSpec } from '../../read/read-flags.js';

/** GetEventsFlags are the flags of `kevents get events`. */
export interface GetEventsFlags extends ReadConnectionFlags {
  output?: string;
  watch?: boolean;
  watchOnly?: boolean;
  fieldSelector?: string;
  selector?: string;
  noHeaders?: boolean;
  chunkSize?: string;
  /** cluster keeps the events archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
}

/** addGetEventsFlags adds the options of `kevents get` (read into GetEventsFlags by parseGetEventsFlags) to its command. */
export function addGetEventsFlags(c: Command, io: CliIO): Command {
  return withConnection(
    c
      .option('-n, --namespace <ns>', 'namespace (default: the context\'s, else default)')
      .option('-A, --all-namespaces', 'list events of every namespace')
      .option('-w, --watch', 'after listing, watch for changes')
      .option('--watch-only', 'watch for changes without listing first')
      .option('--field-selector <selector>', 'e.g. involvedObject.name=web-1,type=Warning')
      .option('-l, --selector <selector>', 'label selector')
      .option('--cluster <name>', 'only events archived from this cluster (repeat for several; a CLUSTER column shows when the answer spans several)', collect)
      .option('-o, --output <format>', 'wide, json, yaml or name')
      .option('--no-headers', 'print no header row')
      .option('--chunk-size <n>', 'list in pages of this size (0: one page)', '500'),
    io,
  );
}

/** GET_EVENTS_FLAGS names the kind of each flag of GetEventsFlags. */
const GET_EVENTS_FLAGS: FlagSpec<GetEventsFlags> = { output: 'string', watch: 'boolean', watchOnly: 'boolean', fieldSelector: 'string', selector: 'string', chunkSize: 'string', cluster: 'strings' };

/** parseGetEventsFlags reads commander's options of `kevents get` into GetEventsFlags. */
export function parseGetEventsFlags(opts: CommanderOptions): GetEventsFlags {
  return parseFlags(GET_EVENTS_FLAGS, opts);
}
