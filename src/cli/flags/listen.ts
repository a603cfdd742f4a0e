// --listen, read by kevents serve, mirror and export: below the three commands, so none imports another for it.
import { UsageError } from '../errors.js';

/** parseListen reads `HOST:PORT`, `:PORT` or `PORT`. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:?(\d+)$/.exec(text.trim());
  if (m === null) throw new UsageError(`invalid --listen ${JSON.stringify(text)}: use HOST:PORT, e.g. 127.0.0.1:8080`);
  const port = Number(m[3]);
  if (port > 65535) throw new UsageError(`invalid --listen port ${port}`);
  const host = m[1] ?? (m[2] === undefined || m[2] === '' ? '127.0.0.1' : m[2]);
  return { host, port };
}
