import type { Logger } from '../internal/index.js';

/**
 * createCliLogger writes a library's warnings and errors for a person at a
 * terminal: one line each, `warning: <message> (key=value …)`, instead of JSON.
 */
export function createCliLogger(stream: NodeJS.WritableStream, verbose = false): Logger {
  const line = (label: string, msg: string, fields?: Record<string, unknown>): void => {
    const extra = Object.entries(fields ?? {})
      .map(([k, v]) => `${k}=${v instanceof Error ? v.message : typeof v === 'object' && v !== null ? ((v as { message?: string }).message ?? JSON.stringify(v)) : String(v)}`)
      .join(' ');
    stream.write(`${label}: ${msg}${extra === '' ? '' : ` (${extra})`}\n`);
  };
  return {
    error: (m, f) => line('error', m, f),
    warn: (m, f) => line('warning', m, f),
    info: (m, f) => (verbose ? line('info', m, f) : undefined),
    debug: () => undefined,
  };
}
