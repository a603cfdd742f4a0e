import type { CoreEvent, Occurrence } from '../../api/index.js';
import { isNotFound } from '../../api/index.js';
import type { ReadClient } from '../../client/index.js';
import { collectTimeline, ForParseError, formatTimeline, isNamespacedKind, parseForArgument, TIMELINE_FORMATS } from '../../timeline/index.js';
import type { ObjectRef, SourceQuery, TimelineFormat, TimelineSource } from '../../timeline/index.js';
import { UsageError } from '../errors.js';
import { explainTransport } from '../flags/connection.js';
import { explainTimeline } from '../../diagnosis/index.js';
import { connectRead, listAllEvents } from './get-events.js';
import type { ReadConnectionFlags } from './get-events.js';
import { clusterSelector } from '../flags/cluster.js';
import { validateTypes } from './events.js';
import { parseGoDuration } from '../flags/duration.js';
import { createColours } from '../output/colour.js';
import { createProgress } from '../output/progress.js';
import type { Progress } from '../output/progress.js';
import type { CliIO } from '../io.js';

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
}

/** OCCURRENCE_PAGE is the page size of occurrence reads: the archive API pages in observed-time order. */
const OCCURRENCE_PAGE = 5000;

function selector(q: SourceQuery, prefix: 'involvedObject' | 'regarding'): string | undefined {
  const terms: string[] = [];
  if (q.kind !== undefined) terms.push(`${prefix}.kind=${q.kind}`);
  if (q.name !== undefined) terms.push(`${prefix}.name=${q.name}`);
  return terms.length === 0 ? undefined : terms.join(',');
}

/**
 * httpTimelineSource reads a timeline over HTTP: events through the core/v1
 * API, history through the archive API. A server without the archive API (any
 * plain API server) answers 404, and the timeline spreads counts instead.
 */
export function httpTimelineSource(client: ReadClient, progress?: Progress, options: { archive?: boolean; clusters?: readonly string[] } = {}): TimelineSource {
  let read = 0;
  let archive = options.archive !== false;
  const labelSelector = clusterSelector(options.clusters);
  // The archive API selects one cluster by field; several are kept here.
  const clusters = new Set(options.clusters ?? []);
  const occurrenceSelector = (q: SourceQuery): string | undefined => {
    const terms = [selector(q, 'regarding'), clusters.size === 1 ? `cluster=${[...clusters][0]!}` : undefined].filter((t) => t !== undefined);
    return terms.length === 0 ? undefined : terms.join(',');
  };
  return {
    async listEvents(q): Promise<CoreEvent[]> {
      const before = read;
      const { items } = await listAllEvents(client, { namespace: q.namespace, fieldSelector: selector(q, 'involvedObject'), labelSelector }, (n) => {
        read = before + n;
        progress?.update(read);
      });
      return items;
    },
    async listOccurrences(q): Promise<Occurrence[] | undefined> {
      if (!archive) return undefined;
      const out: Occurrence[] = [];
      let next: string | undefined;
      try {
        do {
          const page = await client.listOccurrences({
            ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
            // Occurrences are stamped when kevents saw them, never before they happened; so the
            // window's start bounds the read, while its end cannot (a late mirror sees old events).
            ...(q.since !== undefined ? { since: new Date(q.since).toISOString() } : {}),
            ...(occurrenceSelector(q) !== undefined ? { fieldSelector: occurrenceSelector(q)! } : {}),
            limit: OCCURRENCE_PAGE,
            ...(next !== undefined ? { continue: next } : {}),
          });
          for (const o of page.items) if (clusters.size <= 1 || clusters.has(o.cluster ?? '')) out.push(o);
          read += page.items.length;
          progress?.update(read);
          next = page.metadata.continue || undefined;
        } while (next !== undefined);
      } catch (e) {
        if (isNotFound(e)) {
          archive = false;
          return undefined;
        }
        throw e;
      }
      return out;
    },
  };
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
    let ms: number;
    try {
      ms = parseGoDuration(flags.since);
    } catch (e) {
      throw new UsageError(`--since: ${(e as Error).message}`);
    }
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

/** runTimeline is `kevents timeline`: one object's (or a namespace's) incident, one row per occurrence. */
export async function runTimeline(flags: TimelineFlags, io: CliIO): Promise<void> {
  const format = parseFormat(flags.output);
  const types = validateTypes(flags.types);
  const window = parseWindow(flags, Date.now());
  let root: ObjectRef | undefined;
  try {
    root = flags.for === undefined ? undefined : parseForArgument(flags.for, { allowUnknown: true });
  } catch (e) {
    if (e instanceof ForParseError) throw new UsageError(e.message);
    throw e;
  }
  if (root !== undefined && flags.allNamespaces && isNamespacedKind(root.kind)) throw new UsageError(`--for ${flags.for} names an object of one namespace: use -n, not -A`);
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
  const title =
    root !== undefined
      ? `${root.kind}/${root.name}${root.namespace !== undefined ? ` in ${root.namespace}` : ''}`
      : c.listNamespace === undefined
        ? 'all namespaces'
        : `namespace ${c.listNamespace}`;
  const colours = createColours(io.stdout, io.env);
  io.stdout.write(
    formatTimeline(timeline, {
      format,
      title,
      showNamespace: c.listNamespace === undefined && root === undefined,
      ...(format === 'table' && colours.enabled ? { style: colours } : {}),
    }),
  );
  if (timeline.rows.length === 0 && format === 'table') {
    io.stderr.write(`No events found${root !== undefined ? ` for ${root.kind}/${root.name}` : ''}${window.since !== undefined || window.until !== undefined ? ' in the window' : ''}.\n`);
  }
}
