// What kevents lint prints: the report as a table, or as JSON. The stream is passed in.
import type { LintReport } from '../../../lint/index.js';
import { formatLintReport } from '../../../print/index.js';

/** LintOutput is `-o`. */
export type LintOutput = 'table' | 'json';

/** printLintReport writes the report in `-o`'s format. */
export function printLintReport(report: LintReport, output: LintOutput, stdout: NodeJS.WritableStream): void {
  stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatLintReport(report));
}
