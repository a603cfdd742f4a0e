// kevents timeline, laid out as kubectl's commands are: flags → options → validate → run; source.ts reads,
// printer.ts prints.
import { explainTimeline } from '../../../diagnosis/index.js';
import { TIMELINE_FORMATS } from '../../../print/index.js';
import type { TimelineFormat } from '../../../print/index.js';
import { collectTimeline, ForParseError, isNamespacedKind, parseForArgument } from '../../../timeline/index.js';
import type { ObjectRef } from '../../../timeline/index.js';
import { UsageError } from '../../errors.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import { validateTypes } from '../../flags/types.js';
import type { CliIO } from '../../io.js';
import type { TimelineFlags } from './flags.js';
import { createProgress } from '../../output/progress.js';
import { printTimeline } from './printer.js';
import { httpTimelineSource } from '../../read/timeline-source.js';
import { parseWindow } from '../../read/window.js';
import type { TimelineWindow } from '../../read/window.js';

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
