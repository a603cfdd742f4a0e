import { escapeTerminal } from './escape.js';

/**
 * CSV_FORMULA_START are the first characters that make a spreadsheet read a cell
 * as a formula (`=HYPERLINK(…)`, `+cmd|…`, `-…`, `@SUM(…)`), TAB and CR included,
 * as OWASP's CSV-injection guidance lists them.
 */
const CSV_FORMULA_START = /^[=+\-@\t\r]/;

/**
 * escapeCsvField writes one RFC 4180 field from event text: a field a spreadsheet
 * would run as a formula gets a leading `'` (shown, never evaluated), terminal
 * controls are shown as escapeTerminal shows them (the output is often read on a
 * terminal), and a field with a quote, comma or line break is quoted.
 */
export function escapeCsvField(s: string): string {
  const text = escapeTerminal(CSV_FORMULA_START.test(s) ? `'${s}` : s);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
