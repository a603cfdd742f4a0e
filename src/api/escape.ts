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

/** EscapedPart is a piece of escaped text: a run of the text as written, or one character shown as its escape (`control`). */
export interface EscapedPart {
  text: string;
  control: boolean;
}

/** EscapeOptions pick the rule: `line` is escapeTerminalLine's (TAB and LF shown too), else escapeTerminal's. */
export interface EscapeOptions {
  line?: boolean;
}

/**
 * escapeParts is escapeTerminal (or, with `line`, escapeTerminalLine) in pieces:
 * the runs of text as written and, apart, each control as its escape, so a
 * page can draw an escape as a marker that no event's own text can pass for.
 * The parts' texts joined are the escaped string.
 */
export function escapeParts(s: string, options: EscapeOptions = {}): EscapedPart[] {
  const parts: EscapedPart[] = [];
  let at = 0;
  for (const m of s.matchAll(options.line === true ? LINE_CONTROL : TERMINAL_CONTROL)) {
    if (m.index > at) parts.push({ text: s.slice(at, m.index), control: false });
    parts.push({ text: visible(m[0]), control: true });
    at = m.index + 1;
  }
  if (at < s.length) parts.push({ text: s.slice(at), control: false });
  return parts;
}

/**
 * isolateLine is a value shown inside a line of plain text that cannot style it
 * (a tooltip, an accessible name): escaped as escapeTerminalLine does, between
 * U+2068 FIRST STRONG ISOLATE and U+2069 POP DIRECTIONAL ISOLATE, so that its
 * own right-to-left letters cannot reorder the words around it.
 */
export function isolateLine(s: string): string {
  return `\u2068${escapeTerminalLine(s)}\u2069`;
}

/** hasControlCharacter tells whether `s` holds anything escapeTerminalLine would rewrite (TAB and LF included). */
export function hasControlCharacter(s: string): boolean {
  return LINE_CONTROL_TEST.test(s);
}
