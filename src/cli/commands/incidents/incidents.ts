// kevents incidents, laid out as kubectl's commands are: flags → options → validate → run; the timeline's
// source.ts reads, printer.ts prints.
import { collectIncidents, INCIDENT_FORMATS } from '../../../diagnosis/index.js';
import type { IncidentFormat } from '../../../diagnosis/index.js';
import { UsageError } from '../../errors.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import type { ReadConnectionFlags } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import { createProgress } from '../../output/progress.js';
import { httpTimelineSource } from '../timeline/source.js';
import { parseWindow } from '../timeline/timeline.js';
import type { TimelineWindow } from '../timeline/timeline.js';
import { printIncidents } from './printer.js';

/** IncidentsFlags are the flags of `kevents incidents`. */
export interface IncidentsFlags extends ReadConnectionFlags {
  since?: string;
  sinceTime?: string;
  until?: string;
  output?: string;
  /** cluster keeps what was archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
}

/** IncidentsOptions are the checked flags. */
export interface IncidentsOptions {
  format: IncidentFormat;
  window: TimelineWindow;
  clusters: string[];
}

/** incidentsOptions checks the flags before anything is read; `now` anchors `--since`. */
export function incidentsOptions(flags: IncidentsFlags, now: number): IncidentsOptions {
  const format = flags.output ?? 'table';
  if (!(INCIDENT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`-o must be one of ${INCIDENT_FORMATS.join(', ')}`);
  return { format: format as IncidentFormat, window: parseWindow(flags, now), clusters: flags.cluster ?? [] };
}

/**
 * runIncidents is `kevents incidents`: what went wrong in the window, one
 * incident per root with its cause, most recent first. It reads events and the
 * archive's history over HTTP and builds the incidents as `kevents serve` does.
 */
export async function runIncidents(flags: IncidentsFlags, io: CliIO): Promise<void> {
  const { format, window, clusters } = incidentsOptions(flags, Date.now());
  const c = await connectRead(flags, io);
  const progress = createProgress({ stream: io.stderr, env: io.env, label: 'reading events and occurrences' });
  let list;
  try {
    list = await collectIncidents({
      source: httpTimelineSource(c.client, progress, clusters.length > 0 ? { clusters } : {}),
      namespace: c.listNamespace,
      since: window.since,
      until: window.until,
    });
  } catch (e) {
    throw explainTransport(e, c);
  } finally {
    progress.done();
  }
  printIncidents(list, { format, listNamespace: c.listNamespace }, io);
}
