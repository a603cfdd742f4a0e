/**
 * parseGoDuration reads a duration the way Go's time.ParseDuration does
 * (`1h`, `90m`, `1h30m`, `2.5s`, `0`), since kube-apiserver's flags such as
 * `--event-ttl` take that syntax. Returns milliseconds; throws on bad input.
 */
export function parseGoDuration(text: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const s = text.trim();
  if (s === '0') return 0;
  // Days are not Go syntax, but retention periods read better as "30d".
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d)/gy;
  let total = 0;
  let matched = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    const unit = m[2]!;
    total += Number(m[1]) * (unit === 'd' ? 86_400_000 : units[unit]!);
    matched = re.lastIndex;
  }
  if (s === '' || matched !== s.length) throw new Error(`invalid duration ${JSON.stringify(text)} (use Go syntax such as 90s, 30m, 1h or 1h30m)`);
  return total;
}

/** formatGoDuration prints milliseconds as Go's Duration.String does (`1h0m0s`). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms / 1000);
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const sec = rest - m * 60;
  if (h > 0) return `${h}h${m}m${sec}s`;
  if (m > 0) return `${m}m${sec}s`;
  return `${sec}s`;
}
