/**
 * Colour on a terminal only: never when output is piped or captured, never with
 * NO_COLOR (https://no-color.org: set to anything but the empty string), never on a dumb terminal.
 */

/** Colours is a set of SGR wrappers; without colour each returns its text unchanged. */
export interface Colours {
  enabled: boolean;
  warning(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

/** colourEnabled tells whether to colour what goes to `stream`. */
export function colourEnabled(stream: NodeJS.WritableStream, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return (stream as { isTTY?: boolean }).isTTY === true;
}

function sgr(open: number, close: number): (s: string) => string {
  return (s) => (s === '' ? s : `\x1b[${open}m${s}\x1b[${close}m`);
}

const identity = (s: string): string => s;

/** createColours returns the colours for `stream`: real ones on a terminal, identity otherwise. */
export function createColours(stream: NodeJS.WritableStream, env: NodeJS.ProcessEnv): Colours {
  if (!colourEnabled(stream, env)) return { enabled: false, warning: identity, dim: identity, bold: identity };
  return { enabled: true, warning: sgr(33, 39), dim: sgr(2, 22), bold: sgr(1, 22) };
}
