import { formatLintReport, lintEvents } from '../../timeline/index.js';
import { CliError } from '../errors.js';
import { explainTransport } from '../flags/connection.js';
import { connectRead, listAllEvents } from './get-events.js';
import type { ReadConnectionFlags } from './get-events.js';
import { createProgress } from '../output/progress.js';
import type { CliIO } from '../io.js';

/** LintFlags are the flags of `kevents lint`. */
export interface LintFlags extends ReadConnectionFlags {
  output?: string;
  /** failOnFindings makes any broken convention exit 1 (for CI). */
  failOnFindings?: boolean;
}

/** runLint reads events and reports those that break the conventions, with counts. */
export async function runLint(flags: LintFlags, io: CliIO): Promise<void> {
  const output = flags.output ?? 'table';
  if (output !== 'table' && output !== 'json') throw new CliError('-o must be table or json');
  const c = await connectRead(flags, io);
  const progress = createProgress({ stream: io.stderr, env: io.env, label: 'reading events' });
  let items;
  try {
    items = (await listAllEvents(c.client, { namespace: c.listNamespace }, (n) => progress.update(n))).items;
  } catch (e) {
    throw explainTransport(e, c);
  } finally {
    progress.done();
  }
  const report = lintEvents(items);
  io.stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatLintReport(report));
  if (flags.failOnFindings && report.broken > 0) throw new CliError(`${report.broken} of ${report.checked} events break a convention`);
}
