// kevents timeline, laid out as kubectl's commands are: flags → options → validate → run; source.ts reads,
// printer.ts prints.
import { explainTimeline } from '../../../diagnosis/index.js';
import { TIMELINE_FORMATS } from '../../../print/index.js';
import type { TimelineFormat } from '../../../print/index.js';
import { collectTimeline, ForParseError, isNamespacedKind, parseForArgument } from '../../../timeline/index.js';
import type { ObjectRef } from '../../../timeline/index.js';
import { UsageError } from '../../errors.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import type { ReadConnectionFlags } from '../../flags/connection.js';
import { parseDurationFlag } from '../../flags/duration.js';
import { validateTypes } from '../../flags/types.js';
import type { CliIO } from '../../io.js';
import { createProgress } from '../../output/progress.js';
import { printTimeline } from './printer.js';
import { httpTimelineSource } from './source.js';

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
export function parseWindow(flags: Pick<TimelineFlags, 'since' | 'sinceTime' | 'until'>, now: number): TimelineWindow {
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

function parseFormat(output: string | undefined): TimelineFormat {
  const f = output ?? 'table';
  if (!(TIMELINE_FORMATS as readonly string[]).includes(f)) throw new UsageError(`-o must be one of ${TIMELINE_FORMATS.join(', ')}`);
  return f as TimelineFormat;
}

/** TimelineOptions are the checked flags. */
export interface TimelineOptions {
  format: TimelineFormat;
  types: string[];
  window: TimelineWindow;
  /** root is `--for`'s object, its namespace filled in once the connection is known. */
  root: ObjectRef | undefined;
}

/** timelineOptions checks the flags before anything is read; `now` anchors `--since`. */
export function timelineOptions(flags: TimelineFlags, now: number): TimelineOptions {
  const format = parseFormat(flags.output);
  const types = validateTypes(flags.types);
  const window = parseWindow(flags, now);
  let root: ObjectRef | undefined;
  try {
    root = flags.for === undefined ? undefined : parseForArgument(flags.for, { allowUnknown: true });
  } catch (e) {
    if (e instanceof ForParseError) throw new UsageError(e.message);
    throw e;
  }
  if (root !== undefined && flags.allNamespaces && isNamespacedKind(root.kind)) throw new UsageError(`--for ${flags.for} names an object of one namespace: use -n, not -A`);
  return { format, types, window, root };
}

/** runTimeline is `kevents timeline`: one object's (or a namespace's) incident, one row per occurrence. */
export async function runTimeline(flags: TimelineFlags, io: CliIO): Promise<void> {
  const { format, types, window, root } = timelineOptions(flags, Date.now());
  const c = await connectRead(flags, io);
  if (root !== undefined && isNamespacedKind(root.kind)) root.namespace = c.namespace;
  const progress = createProgress({ stream: io.stderr, env: io.env, label: 'reading events and occurrences' });
  let timeline;
  try {
    timeline = await collectTimeline({
      source: httpTimelineSource(c.client, progress, { archive: flags.archive !== false, ...(flags.cluster !== undefined ? { clusters: flags.cluster } : {}) }),
      for: root,
      namespace: c.listNamespace,
      since: window.since,
      until: window.until,
      types,
      explain: explainTimeline,
    });
  } catch (e) {
    throw explainTransport(e, c);
  } finally {
    progress.done();
  }
  printTimeline(timeline, { format, root, listNamespace: c.listNamespace, window, expand: flags.expand === true }, io);
}
