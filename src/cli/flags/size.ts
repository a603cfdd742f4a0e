import { UsageError } from '../errors.js';

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  ki: 1024,
  kib: 1024,
  mi: 1024 ** 2,
  mib: 1024 ** 2,
  gi: 1024 ** 3,
  gib: 1024 ** 3,
  ti: 1024 ** 4,
  tib: 1024 ** 4,
};

/** parseSize reads a size such as `500MB`, `10Gi`, `2GiB` or a number of bytes. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = SIZE_UNITS[(m?.[2] ?? '').toLowerCase()];
  if (m === null || unit === undefined) throw new UsageError(`invalid size ${JSON.stringify(text)}: use e.g. 500MB, 10GB or 8GiB`);
  return Math.round(Number(m[1]) * unit);
}
