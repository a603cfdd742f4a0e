// --retention and --max-size, shared by kevents serve and kevents mirror.
import { validateClusterName } from './cluster.js';
import { parseGoDuration } from './duration.js';
import { parseSize } from './size.js';
import { UsageError } from '../errors.js';

/** RetentionFlags are `--retention` (repeatable: one default and any per-cluster `NAME=DURATION`) and `--max-size`. */
export interface RetentionFlags {
  retention?: string | string[] | undefined;
  maxSize?: string | undefined;
}

/** RetentionLimits are the parsed retention flags. */
export interface RetentionLimits {
  maxAgeMs?: number;
  clusterMaxAgeMs?: Record<string, number>;
  maxBytes?: number;
}

/**
 * parseRetention reads `--retention` and `--max-size` (both optional). Each
 * `--retention` is a duration (every cluster without one of its own, and local
 * writes) or `NAME=DURATION` (only what was archived from cluster NAME).
 */
export function parseRetention(flags: RetentionFlags): RetentionLimits {
  const out: RetentionLimits = {};
  const values = typeof flags.retention === 'string' ? [flags.retention] : (flags.retention ?? []);
  for (const value of values.filter((v) => v !== '')) {
    const eq = value.indexOf('=');
    const cluster = eq < 0 ? undefined : validateClusterName(value.slice(0, eq), 'cluster name in --retention');
    let ms: number;
    try {
      ms = parseGoDuration(value.slice(eq + 1));
    } catch (e) {
      throw new UsageError(`--retention ${value}: ${(e as Error).message}`);
    }
    if (cluster === undefined) {
      if (out.maxAgeMs !== undefined) throw new UsageError(`--retention ${value}: a default retention is given twice`);
      out.maxAgeMs = ms;
    } else {
      out.clusterMaxAgeMs ??= {};
      if (out.clusterMaxAgeMs[cluster] !== undefined) throw new UsageError(`--retention ${value}: cluster ${cluster} is given twice`);
      out.clusterMaxAgeMs[cluster] = ms;
    }
  }
  if (flags.maxSize !== undefined && flags.maxSize !== '') out.maxBytes = parseSize(flags.maxSize);
  return out;
}
