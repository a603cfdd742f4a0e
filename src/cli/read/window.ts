// The time window of the commands that read a span of the archive (timeline, incidents, search): --since, --since-time
// and --until, defined and read one way for all of them.
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { parseDurationFlag } from '../flags/duration.js';

/** WindowHelp words a window flag's help line where a command reads it its own way; the default is the timeline's. */
export interface WindowHelp {
  since?: string;
  sinceTime?: string;
  until?: string;
}

/** addWindowFlags adds --since, --since-time and --until, which parseWindow reads. */
export function addWindowFlags(c: Command, help: WindowHelp = {}): Command {
  return c
    .option('--since <duration>', help.since ?? 'only the last duration, e.g. 2h or 30m')
    .option('--since-time <time>', help.sinceTime ?? 'only from this RFC 3339 time')
    .option('--until <time>', help.until ?? 'only before this RFC 3339 time');
}

/** WindowFlags are the window's flags as given. */
export interface WindowFlags {
  since?: string | undefined;
  sinceTime?: string | undefined;
  until?: string | undefined;
}

function parseTime(flag: string, text: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`${flag}: ${JSON.stringify(text)} is not an RFC 3339 time such as 2025-01-31T14:00:00Z`);
  return ms;
}

/** TimelineWindow is the parsed window: Unix ms, undefined when open. */
export interface TimelineWindow {
  since?: number;
  until?: number;
}

/** parseWindow reads --since (a duration back from now), --since-time and --until. */
export function parseWindow(flags: WindowFlags, now: number): TimelineWindow {
  if (flags.since !== undefined && flags.sinceTime !== undefined) throw new UsageError('at most one of --since or --since-time may be given');
  const w: TimelineWindow = {};
  if (flags.since !== undefined) {
    const ms = parseDurationFlag('--since', flags.since);
    if (ms <= 0) throw new UsageError('--since must be a positive duration such as 2h or 30m');
    w.since = now - ms;
  }
  if (flags.sinceTime !== undefined) w.since = parseTime('--since-time', flags.sinceTime);
  if (flags.until !== undefined) w.until = parseTime('--until', flags.until);
  if (w.since !== undefined && w.until !== undefined && w.until <= w.since) throw new UsageError('--until must be after the start of the window');
  return w;
}
