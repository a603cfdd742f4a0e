// kevents incidents, laid out as kubectl's commands are: flags → options → validate → run; the timeline's
// source.ts reads, printer.ts prints.
import type { IncidentList, IncidentWindow, IncidentWindowParams } from '../../../api/index.js';
import { incidentQueryParams, incidentWindow, isIncidentWindowError, isNotFound } from '../../../api/index.js';
import { collectIncidents } from '../../../diagnosis/index.js';
import { INCIDENT_FORMATS } from '../../../print/index.js';
import type { IncidentFormat } from '../../../print/index.js';
import { UsageError } from '../../errors.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import type { IncidentsFlags } from './flags.js';
import { createProgress } from '../../output/progress.js';
import { httpTimelineSource } from '../../read/timeline-source.js';
import { printIncidents } from './printer.js';

/** IncidentsOptions are the checked flags. */
export interface IncidentsOptions {
  format: IncidentFormat;
  window: IncidentWindow;
  clusters: string[];
}

const FLAGS: Record<keyof IncidentWindowParams, string> = { since: '--since', sinceTime: '--since-time', until: '--until', lookBack: '--look-back' };

/** incidentsOptions checks the flags before anything is read; `now` anchors `--since`. The window is read by src/api's incidentWindow, as the server and the web UI read it. */
export function incidentsOptions(flags: IncidentsFlags, now: number): IncidentsOptions {
  const format = flags.output ?? 'table';
  if (!(INCIDENT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`-o must be one of ${INCIDENT_FORMATS.join(', ')}`);
  let window: IncidentWindow;
  try {
    window = incidentWindow({ since: flags.since, sinceTime: flags.sinceTime, until: flags.until, lookBack: flags.lookBack }, now);
  } catch (e) {
    if (!isIncidentWindowError(e)) throw e;
    if (e.conflictsWith !== undefined) throw new UsageError(`at most one of ${FLAGS[e.conflictsWith]} or ${FLAGS[e.param]} may be given`);
    throw new UsageError(`${FLAGS[e.param]}: ${e.message}`);
  }
  return { format: format as IncidentFormat, window, clusters: flags.cluster ?? [] };
}

/**
 * runIncidents is `kevents incidents`: what went wrong in the window, one
 * incident per root with its cause, most recent first. It asks the server's
 * incidents (kevents serve builds them from its store) with the very
 * parameters the web UI sends, so both show one answer; a server without them
 * (a plain API server) has its events and the archive's history read over
 * HTTP and the incidents built here by the same code.
 */
export async function runIncidents(flags: IncidentsFlags, io: CliIO): Promise<void> {
  const { format, window, clusters } = incidentsOptions(flags, Date.now());
  const c = await connectRead(flags, io);
  const progress = createProgress({ stream: io.stderr, env: io.env, label: 'reading events and occurrences' });
  let list: IncidentList;
  try {
    list = await c.client.incidents({ ...(c.listNamespace !== undefined ? { namespace: c.listNamespace } : {}), query: incidentQueryParams(window, clusters) }).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
      return collectIncidents({
        source: httpTimelineSource(c.client, progress, clusters.length > 0 ? { clusters } : {}),
        namespace: c.listNamespace,
        since: window.since,
        until: window.until,
        lookBack: window.lookBack,
      });
    });
  } catch (e) {
    throw explainTransport(e, c);
  } finally {
    progress.done();
  }
  printIncidents(list, { format, listNamespace: c.listNamespace }, io);
}
