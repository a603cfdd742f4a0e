// What kevents timeline prints: the timeline in `-o`'s format under its title, and "No events found". The streams
// (and the environment, for colour) are passed in.
import type { Timeline } from '../../../api/index.js';
import { formatTimeline } from '../../../print/index.js';
import type { TimelineFormat } from '../../../print/index.js';
import type { ObjectRef } from '../../../timeline/index.js';
import type { CliIO } from '../../io.js';
import { createColours } from '../../output/colour.js';

/** TimelinePrint are what the printer needs of the query. */
export interface TimelinePrint {
  format: TimelineFormat;
  root: ObjectRef | undefined;
  /** listNamespace is the namespace read, undefined for all. */
  listNamespace: string | undefined;
  window: { since?: number; until?: number };
  /** expand prints one row per occurrence rather than folding repeats (`--expand`). */
  expand?: boolean;
}

/** printTimeline writes the timeline to stdout, and to stderr that a table found nothing. */
export function printTimeline(timeline: Timeline, o: TimelinePrint, io: CliIO): void {
  const { root } = o;
  const title =
    root !== undefined
      ? `${root.kind}/${root.name}${root.namespace !== undefined ? ` in ${root.namespace}` : ''}`
      : o.listNamespace === undefined
        ? 'all namespaces'
        : `namespace ${o.listNamespace}`;
  const colours = createColours(io.stdout, io.env);
  io.stdout.write(
    formatTimeline(timeline, {
      format: o.format,
      title,
      showNamespace: o.listNamespace === undefined && root === undefined,
      fold: o.expand !== true,
      ...(o.format === 'table' && colours.enabled ? { style: colours } : {}),
    }),
  );
  if (timeline.rows.length === 0 && o.format === 'table') {
    io.stderr.write(`No events found${root !== undefined ? ` for ${root.kind}/${root.name}` : ''}${o.window.since !== undefined || o.window.until !== undefined ? ' in the window' : ''}.\n`);
  }
}
