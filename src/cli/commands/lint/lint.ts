// kevents lint, laid out as kubectl's commands are: flags → options → validate → run; printer.ts prints.
import { lintEvents } from '../../../lint/index.js';
import { CliError } from '../../errors.js';
import { connectRead, explainTransport } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import type { LintFlags } from './flags.js';
import { createProgress } from '../../output/progress.js';
import { listAllEvents } from '../../read/list-events.js';
import { printLintReport } from './printer.js';
import type { LintOutput } from './printer.js';

/** LintOptions are the checked flags. */
export interface LintOptions {
  output: LintOutput;
  failOnFindings: boolean;
}

/** lintOptions checks the flags before anything is read. */
export function lintOptions(flags: LintFlags): LintOptions {
  const output = flags.output ?? 'table';
  if (output !== 'table' && output !== 'json') throw new CliError('-o must be table or json');
  return { output, failOnFindings: flags.failOnFindings === true };
}

/** runLint reads events and reports those that break the conventions, with counts. */
export async function runLint(flags: LintFlags, io: CliIO): Promise<void> {
  const o = lintOptions(flags);
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
  printLintReport(report, o.output, io.stdout);
  if (o.failOnFindings && report.broken > 0) throw new CliError(`${report.broken} of ${report.checked} events break a convention`);
}
