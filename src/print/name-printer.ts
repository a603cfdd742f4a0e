import type { CoreEvent } from '../api/index.js';
import { escapeTerminalLine } from '../api/index.js';

/**
 * formatNameLines is the `-o name` output: one `event/<name>` line per event. The
 * name is escaped to stay on its own line, so a name holding a newline cannot add
 * a line naming another object to what a script pipes on.
 */
export function formatNameLines(items: readonly CoreEvent[]): string {
  return items.map((e) => `event/${escapeTerminalLine(e.metadata.name ?? '')}\n`).join('');
}
