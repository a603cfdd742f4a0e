/**
 * Terminal-safe rendering of user-supplied text. Starts from cli-runtime's
 * `printers/terminal.go` (ESC and CR) and goes further: every character that a
 * terminal acts on, or that reorders or hides text, is shown rather than obeyed.
 */

/**
 * The characters a terminal acts on or that mislead a reader: C0 controls (TAB and
 * LF are added or left out by each pattern), DEL, the C1 controls U+0080–U+009F (a
 * terminal reads U+009B as CSI and U+009D as OSC), the bidi controls (U+061C,
 * U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) that make text read in another order
 * than it runs, and the zero-width and separator characters (U+200B–U+200D,
 * U+2028–U+2029, U+2060–U+2064, U+FEFF) that hide text or break lines unseen.
 */
const OTHER_CONTROLS = '\\x7f-\\x9f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff';
const TERMINAL_CONTROL = new RegExp(`[\\x00-\\x08\\x0b-\\x1f${OTHER_CONTROLS}]`, 'g');
const LINE_CONTROL = new RegExp(`[\\x00-\\x1f${OTHER_CONTROLS}]`, 'g');
const LINE_CONTROL_TEST = new RegExp(`[\\x00-\\x1f${OTHER_CONTROLS}]`);

function visible(c: string): string {
  const code = c.charCodeAt(0);
  // kubectl's own spelling for CR, so its golden outputs still match.
  if (c === '\r') return '\\r';
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return '^?';
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * escapeTerminal shows every terminal control as plain text: C0 controls but TAB and
 * LF in caret notation (ESC as `^[`, as kubectl's printers.EscapeTerminal), CR as
 * `\r`, DEL as `^?`, C1, bidi and zero-width characters as `\uXXXX`. TAB and LF
 * stay, for multi-line text; a printer that needs one line uses escapeTerminalLine.
 */
export function escapeTerminal(s: string): string {
  return s.replace(TERMINAL_CONTROL, visible);
}

/**
 * escapeTerminalLine is escapeTerminal for text that must stay on one line (a
 * command, a table cell, a `-o name` line): TAB and LF are shown too, as `^I` and `^J`.
 */
export function escapeTerminalLine(s: string): string {
  return s.replace(LINE_CONTROL, visible);
}

/** hasControlCharacter tells whether `s` holds anything escapeTerminalLine would rewrite (TAB and LF included). */
export function hasControlCharacter(s: string): boolean {
  return LINE_CONTROL_TEST.test(s);
}
