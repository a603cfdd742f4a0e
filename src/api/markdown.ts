import { escapeTerminalLine } from './escape.js';

/**
 * Markdown from event text: a message may carry `[click](https://evil)`, an image
 * that loads a tracker, raw HTML or a `|` that splits a table row. Each helper
 * gives text that renders as the characters it holds, on one line.
 */

/**
 * MARKDOWN_SPECIAL are the ASCII punctuation characters that start markup inline:
 * emphasis, code spans, links and images (`[`, `]`: with them escaped neither
 * `[x](url)` nor `![x](url)` is one), autolinks and HTML, entities, table cells,
 * strikethrough, and the backslash itself. CommonMark reads a backslash before any
 * of them as the literal character.
 */
const MARKDOWN_SPECIAL = /[\\`*_[\]<>|~&]/g;

/**
 * escapeMarkdown makes `s` literal inline Markdown (CommonMark and GFM), safe in
 * a table cell: markup characters are backslash-escaped, so no link, image, HTML
 * tag, code span or cell break comes from the text, and controls and line breaks
 * are shown as escapeTerminalLine shows them (after runs of whitespace around a
 * line break become one space).
 */
export function escapeMarkdown(s: string): string {
  return escapeTerminalLine(s.replace(/\s*\n\s*/g, ' ')).replace(MARKDOWN_SPECIAL, '\\$&');
}

/**
 * markdownCode is `s` as an inline code span: fenced by one backtick more than the
 * longest run inside it, so no backtick in the text can end the span early, and
 * `|` escaped, which GFM requires even in code when the span sits in a table.
 */
export function markdownCode(s: string): string {
  const text = escapeTerminalLine(s.replace(/\s*\n\s*/g, ' ')).replace(/\|/g, '\\|');
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}
