import { collectIncidents, formatIncidents, INCIDENT_FORMATS } from '../../diagnosis/index.js';
import type { IncidentFormat } from '../../diagnosis/index.js';
import { UsageError } from '../errors.js';
import { explainTransport } from '../flags/connection.js';
import { createProgress } from '../output/progress.js';
import type { CliIO } from '../io.js';
import { connectRead } from './get-events.js';
import type { ReadConnectionFlags } from './get-events.js';
import { httpTimelineSource, parseWindow } from './timeline.js';

/** IncidentsFlags are the flags of `kevents incidents`. */
export interface IncidentsFlags extends ReadConnectionFlags {
  since?: string;
  sinceTime?: string;
  until?: string;
  output?: string;
  /** cluster keeps what was archived from these clusters (`--cluster`, repeatable). */
  cluster?: string[];
}

function parseFormat(output: string | undefined): IncidentFormat {
  const f = output ?? 'table';
  if (!(INCIDENT_FORMATS as readonly string[]).includes(f)) throw new UsageError(`-o must be one of ${INCIDENT_FORMATS.join(', ')}`);
  return f as IncidentFormat;
}

/**
 * runIncidents is `kevents incidents`: what went wrong in the window, one
 * incident per root with its cause, most recent first. It reads events and the
 * archive's history over HTTP and builds the incidents as `kevents serve` does.
 */
export async function runIncidents(flags: IncidentsFlags, io: CliIO): Promise<void> {
  const format = parseFormat(flags.output);
  const window = parseWindow(flags, Date.now());
  const c = await connectRead(flags, io);
  const progress = createProgress({ stream: io.stderr, env: io.env, label: 'reading events and occurrences' });
  let list;
  try {
    list = await collectIncidents({
      source: httpTimelineSource(c.client, progress, { ...(flags.cluster !== undefined && flags.cluster.length > 0 ? { clusters: flags.cluster } : {}) }),
      namespace: c.listNamespace,
      since: window.since,
      until: window.until,
    });
  } catch (e) {
    throw explainTransport(e, c);
  } finally {
    progress.done();
  }
  io.stdout.write(formatIncidents(list, { format, now: Date.now(), showNamespace: c.listNamespace === undefined, namespace: c.listNamespace }));
}
