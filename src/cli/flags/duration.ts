// Durations in flags: Go's syntax (from src/api, where the archive's search query reads it too), and one error
// shape, `--flag: why`, for every command that takes one.
import { parseGoDuration } from '../../api/index.js';
import { UsageError } from '../errors.js';

export { formatGoDuration, parseGoDuration } from '../../api/index.js';

/** parseDurationFlag reads a flag's Go duration in ms; a bad one is a usage error naming the flag. */
export function parseDurationFlag(name: string, text: string): number {
  try {
    return parseGoDuration(text);
  } catch (e) {
    throw new UsageError(`${name}: ${(e as Error).message}`);
  }
}
