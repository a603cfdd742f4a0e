// What kevents archive stats prints: the size report as a table, or as JSON. The stream is passed in.
import { formatTable } from '../../../print/index.js';
import type { SizeReport } from '../../../storage/index.js';

/** ArchiveStatsOutput is `-o`. */
export type ArchiveStatsOutput = 'table' | 'json';

/** formatBytes writes a byte count in binary units, as `--max-size` takes them. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

const perItem = (bytes: number, items: number): string => (items === 0 ? '-' : `${Math.round(bytes / items)} B`);

/** printArchiveStats writes the report: what the archive holds, per item, then each table and index, largest first. */
export function printArchiveStats(report: SizeReport, output: ArchiveStatsOutput, describe: string, stdout: NodeJS.WritableStream): void {
  if (output === 'json') {
    stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  const lines = [
    `archive ${describe}: ${formatBytes(report.totalBytes)}`,
    `  events ${report.events}, versions ${report.versions}, occurrences ${report.occurrences}`,
    `  per event ${perItem(report.totalBytes, report.events)}, per version ${perItem(report.totalBytes, report.versions)}, per occurrence ${perItem(report.totalBytes, report.occurrences)}`,
  ];
  if (report.retention !== undefined) {
    const cutoff = new Date(report.retention.cutoffMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    lines.push(`  a retention to ${cutoff} would remove ${report.retention.occurrences} occurrences, about ${formatBytes(report.retention.bytes)}`);
  }
  lines.push('');
  const rows = report.relations.map((r) => [r.name, r.kind, r.table, formatBytes(r.bytes), report.totalBytes === 0 ? '-' : `${((100 * r.bytes) / report.totalBytes).toFixed(1)}%`]);
  stdout.write(`${lines.join('\n')}\n${formatTable([['NAME', 'KIND', 'TABLE', 'SIZE', 'SHARE'], ...rows])}`);
}
