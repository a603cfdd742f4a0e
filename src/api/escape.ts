/**
 * Terminal-safe rendering of user-supplied text (cli-runtime `printers/terminal.go`).
 */

/**
 * escapeTerminal replaces ESC with `^[` and CR with the two characters `\r`,
 * as kubectl's printers.EscapeTerminal does, so that event text cannot move
 * the cursor, recolour or rewrite the user's terminal. Nothing else changes.
 */
export function escapeTerminal(s: string): string {
  return s.replace(/[\x1b\r]/g, (c) => (c === '\x1b' ? '^[' : '\\r'));
}
