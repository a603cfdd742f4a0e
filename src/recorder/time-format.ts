let lastSecond = Number.NaN;
let lastText = '';

/** formatTime renders a metav1.Time: RFC 3339 UTC to the second. */
export function formatTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Recorders format the same second over and over; the memo keeps event() cheap.
  if (second !== lastSecond) {
    lastText = new Date(second * 1000).toISOString().slice(0, 19) + 'Z';
    lastSecond = second;
  }
  return lastText;
}

/** formatMicroTime renders a metav1.MicroTime: RFC 3339 UTC with exactly six fractional digits. */
export function formatMicroTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.round((ms - whole) * 1000);
  const iso = new Date(whole).toISOString(); // 2006-01-02T15:04:05.000Z
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}
