// The `kevents lint` report as text; the checks and the report's numbers are src/lint's.
import { escapeTerminalLine } from '../api/index.js';
import type { LintReport } from '../lint/index.js';
import { formatTable } from './tabwriter.js';

function show(s: string): string {
  return s === '' ? '<none>' : escapeTerminalLine(s);
}

/** formatLintReport prints a report: totals per check, then the offenders by reporter and reason. */
export function formatLintReport(r: LintReport): string {
  const totals = formatTable([
    ['CHECK', 'EVENTS', 'OCCURRENCES', 'WHY IT MATTERS'],
    ...r.byCheck.map((c) => [c.check, String(c.events), String(c.occurrences), c.description]),
  ]);
  let out = `${r.broken} of ${r.checked} events break a convention.\n\n${totals}`;
  if (r.findings.length > 0) {
    out += `\n${formatTable([
      ['CHECK', 'REPORTER', 'REASON', 'EVENTS', 'OCCURRENCES', 'EXAMPLE'],
      ...r.findings.map((f) => [f.check, show(f.reporter), show(f.reason), String(f.events), String(f.occurrences), show(f.example)]),
    ])}`;
  }
  return out;
}
