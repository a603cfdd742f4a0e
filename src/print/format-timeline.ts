import { escapeCsvField, escapeMarkdown, escapeTerminalLine, foldRuns, humanDuration, markdownCode, timelineAnswer } from '../api/index.js';
import type { RowRun, Timeline, TimelineCause, TimelineRow } from '../api/index.js';

/** TimelineFormat is an `-o` value of `kevents timeline`. */
export type TimelineFormat = 'table' | 'markdown' | 'csv' | 'json';

/** TIMELINE_FORMATS lists the formats, for flag validation. */
export const TIMELINE_FORMATS: readonly TimelineFormat[] = ['table', 'markdown', 'csv', 'json'];

/** TimelineStyle colours parts of the table output; every function defaults to no colour. */
export interface TimelineStyle {
  warning(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const PLAIN: TimelineStyle = { warning: (s) => s, dim: (s) => s, bold: (s) => s };

/** FormatTimelineOptions shape the output. */
export interface FormatTimelineOptions {
  format: TimelineFormat;
  /** title names what the timeline is for, e.g. `Deployment/web in prod`. */
  title?: string;
  /** showNamespace adds a NAMESPACE column (for `-A`). */
  showNamespace?: boolean;
  /** topReasons is how many reasons the table and markdown summaries list (default 5). */
  topReasons?: number;
  style?: TimelineStyle;
  /**
   * fold prints, in the table, each run of consecutive rows of one event's
   * repeats (same object, type, reason and message), and each of two events
   * whose runs alternate, as one row at its first time, its count written
   * `x14 over 28m` (src/api's foldRuns); `kevents timeline` folds unless `--expand`.
   */
  fold?: boolean;
}

/** runCount is a run's COUNT cell: the count of one row, `x14 over 28m` for a folded run. */
function runCount(run: RowRun): string {
  if (run.rows === 1) return String(run.count);
  return `x${run.count} over ${humanDuration(Date.parse(run.last.time) - Date.parse(run.first.time))}`;
}

/** formatTimeline renders a timeline in one of the output formats. */
export function formatTimeline(t: Timeline, options: FormatTimelineOptions): string {
  switch (options.format) {
    case 'json':
      // The document as served: each repeated text once (the whole of it: no byte bound on a file of one's own).
      return `${JSON.stringify(timelineAnswer(t, Infinity), null, 2)}\n`;
    case 'csv':
      return formatCsv(t);
    case 'markdown':
      return formatMarkdown(t, options);
    case 'table':
      return formatText(t, options);
  }
}

/** MAX_CAUSE_LINES bounds the causes a summary lists: the summary stays a summary, `kevents incidents` lists them all. */
const MAX_CAUSE_LINES = 10;

/** causeWhere names an incident's root and its namespace. */
function causeWhere(c: TimelineCause): string {
  return c.namespace ? `${c.root} in ${c.namespace}` : c.root;
}

/** oneLine is event text as a terminal shows it: a line break and the blanks around it become one space, controls are escaped. */
function oneLine(s: string): string {
  return escapeTerminalLine(s.replace(/\s*\n\s*/g, ' '));
}

/** windowText is the window; an end that is an estimated row's time is marked as estimated. */
function windowText(t: Timeline): string {
  const { since, until } = t.summary.window;
  if (since === null || until === null) return 'no events';
  const span = Date.parse(until) - Date.parse(since);
  const first = t.rows[0];
  const last = t.rows[t.rows.length - 1];
  const from = first !== undefined && first.estimated && first.time === since ? `~${since}` : since;
  const to = last !== undefined && last.estimated && last.time === until ? `~${until}` : until;
  return `${from} to ${to} (${humanDuration(span)})`;
}

function estimatedText(s: Timeline['summary']): string {
  const parts: string[] = [];
  if (s.estimatedRows > 0) parts.push(`~ marks ${s.estimatedRows} estimated rows (times spread between known ones)`);
  if (s.undated > 0) parts.push(`${s.undated} occurrences carry no time at all`);
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
}

function reasonsText(t: Timeline, top: number): string {
  const shown = t.summary.reasons.slice(0, top).map((r) => `${r.reason} ${r.count}`);
  const more = t.summary.reasons.length - top;
  return more > 0 ? `${shown.join(', ')}, and ${more} more` : shown.join(', ');
}

function rowTime(r: TimelineRow): string {
  return r.estimated ? `~${r.time}` : r.time;
}

function formatText(t: Timeline, o: FormatTimelineOptions): string {
  const style = o.style ?? PLAIN;
  const top = o.topReasons ?? 5;
  const s = t.summary;
  const lines: string[] = [];
  lines.push(style.bold(`Timeline${o.title ? ` of ${o.title}` : ''}: ${windowText(t)}`));
  if (s.cause) lines.push(style.bold(`Cause: ${oneLine(s.cause.text)}`));
  if (s.causes !== undefined && s.causes.length > 0) {
    lines.push(style.bold(`Causes: ${s.causes.length} incidents, one line each (kevents incidents shows each with its next steps)`));
    for (const c of s.causes.slice(0, MAX_CAUSE_LINES)) lines.push(`  ${oneLine(causeWhere(c))}: ${oneLine(c.text)}`);
    if (s.causes.length > MAX_CAUSE_LINES) lines.push(`  and ${s.causes.length - MAX_CAUSE_LINES} more`);
  }
  if (s.firstWarning !== null) {
    const w = s.firstWarning;
    lines.push(`First Warning: ${w.estimated ? '~' : ''}${w.time} ${oneLine(w.object)} ${style.warning(oneLine(w.reason))}: ${oneLine(w.message)}`);
  } else {
    lines.push('First Warning: none');
  }
  if (s.reasons.length > 0) lines.push(`Reasons:  ${oneLine(reasonsText(t, top))}`);
  if (s.objects.length > 0) lines.push(`Objects:  ${oneLine(s.objects.map((x) => x.object).join(', '))}`);
  const history = s.history === 'occurrences' ? 'archive occurrences' : 'event counts';
  const folded = o.fold === true && foldRuns(t.rows, true).some((r) => r.rows > 1);
  lines.push(style.dim(`${s.rows} rows, ${s.occurrences} occurrences, from ${history}${estimatedText(s)}${folded ? '; repeats of one event folded into one row (--expand shows each)' : ''}`));
  lines.push('');
  if (t.rows.length > 0) {
    const header = [...(o.showNamespace ? ['NAMESPACE'] : []), 'TIME', 'TYPE', 'REASON', 'OBJECT', 'COUNT', 'MESSAGE'];
    const shown = foldRuns(t.rows, o.fold === true);
    const cells = shown.map(({ first: r, ...run }) => [
      ...(o.showNamespace ? [oneLine(r.namespace)] : []),
      rowTime(r),
      oneLine(r.type),
      oneLine(r.reason),
      oneLine(r.object),
      runCount({ first: r, ...run }),
      oneLine(r.message),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => [...c[i]!].length)));
    const typeCol = o.showNamespace ? 2 : 1;
    const render = (c: string[], isWarning: boolean): string =>
      c
        .map((cell, i) => {
          const padded = i === c.length - 1 ? cell : cell + ' '.repeat(widths[i]! - [...cell].length + 3);
          return isWarning && (i === typeCol || i === typeCol + 1) ? style.warning(padded) : padded;
        })
        .join('')
        .trimEnd();
    lines.push(render(header, false));
    shown.forEach((run, i) => lines.push(render(cells[i]!, run.first.type.toLowerCase() === 'warning')));
    lines.push('');
  }
  if (t.hints.length > 0) {
    lines.push(style.bold('Next steps:'));
    for (const h of t.hints) {
      lines.push(`  ${oneLine(h.reason)}: ${oneLine(h.why)}`);
      lines.push(`    ${oneLine(h.command)}`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}`;
}

function formatMarkdown(t: Timeline, o: FormatTimelineOptions): string {
  const s = t.summary;
  const out: string[] = [];
  out.push(`# Timeline${o.title ? ` of ${escapeMarkdown(o.title)}` : ''}`, '');
  if (s.cause) out.push(`- **Cause:** ${escapeMarkdown(s.cause.text)}`);
  if (s.causes !== undefined && s.causes.length > 0) {
    out.push(`- **Causes:** ${s.causes.length} incidents (\`kevents incidents\` shows each with its next steps)`);
    for (const c of s.causes.slice(0, MAX_CAUSE_LINES)) out.push(`  - ${markdownCode(causeWhere(c))}: ${escapeMarkdown(c.text)}`);
    if (s.causes.length > MAX_CAUSE_LINES) out.push(`  - and ${s.causes.length - MAX_CAUSE_LINES} more`);
  }
  out.push(`- **Window:** ${windowText(t)}`);
  out.push(
    s.firstWarning === null
      ? '- **First Warning:** none'
      : `- **First Warning:** ${s.firstWarning.estimated ? '~' : ''}${s.firstWarning.time} ${markdownCode(s.firstWarning.object)} **${escapeMarkdown(s.firstWarning.reason)}**: ${escapeMarkdown(s.firstWarning.message)}`,
  );
  if (s.reasons.length > 0) out.push(`- **Reasons:** ${escapeMarkdown(reasonsText(t, o.topReasons ?? 5))}`);
  if (s.objects.length > 0) out.push(`- **Objects:** ${s.objects.map((x) => markdownCode(x.object)).join(', ')}`);
  out.push(
    `- **Rows:** ${s.rows} (${s.occurrences} occurrences${s.estimatedRows > 0 ? `, ${s.estimatedRows} estimated, marked ~: times spread between known ones` : ''}${s.undated > 0 ? `; ${s.undated} occurrences carry no time at all` : ''})`,
    '',
  );
  if (t.rows.length > 0) {
    const header = [...(o.showNamespace ? ['Namespace'] : []), 'Time', 'Type', 'Reason', 'Object', 'Count', 'Message'];
    out.push(`| ${header.join(' | ')} |`, `|${header.map((h) => (h === 'Count' ? '---:' : '---')).join('|')}|`);
    for (const r of t.rows) {
      // The time and the count are ours (the `~` of an estimated time is meant as written); the rest is event text.
      const cells = [...(o.showNamespace ? [escapeMarkdown(r.namespace)] : []), rowTime(r), ...[r.type, r.reason, r.object].map(escapeMarkdown), String(r.count), escapeMarkdown(r.message)];
      out.push(`| ${cells.join(' | ')} |`);
    }
    out.push('');
  }
  if (t.hints.length > 0) {
    out.push('## Next steps', '');
    for (const h of t.hints) out.push(`- **${escapeMarkdown(h.reason)}**: ${escapeMarkdown(h.why)}`, '  ```sh', `  ${oneLine(h.command)}`, '  ```');
    out.push('');
  }
  return out.join('\n');
}

function formatCsv(t: Timeline): string {
  // earliest and latest bound an estimated row's time (empty where the data gives no bound, and on known rows).
  const lines = ['time,namespace,object,type,reason,message,count,estimated,earliest,latest'];
  for (const r of t.rows) {
    lines.push(
      [r.time, r.namespace, r.object, r.type, r.reason, r.message, String(r.count), String(r.estimated), r.earliest ?? '', r.latest ?? ''].map(escapeCsvField).join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
