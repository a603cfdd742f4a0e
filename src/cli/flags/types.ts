// --types, read by kevents events and kevents timeline.
import { CliError } from '../errors.js';

/**
 * validateTypes is kubectl events' --types check: values are split on commas,
 * de-duplicated and sorted; each must be Normal or Warning, case-insensitively.
 */
export function validateTypes(values: readonly string[] | undefined): string[] {
  const set = new Set<string>();
  for (const v of values ?? []) for (const t of v.split(',')) if (t !== '') set.add(t);
  const types = [...set].sort();
  for (const t of types) {
    const lower = t.toLowerCase();
    if (lower !== 'normal' && lower !== 'warning') throw new CliError('valid --types are Normal or Warning');
  }
  return types;
}
