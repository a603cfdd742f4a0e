import { isIP } from 'node:net';

/**
 * isLoopbackHost tells whether a listen address only reaches this machine:
 * `localhost`, 127.0.0.0/8, ::1 (and its IPv4-mapped form). `0.0.0.0`, `::` and
 * any other name or address listen beyond it.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^(0{0,4}:){0,5}:?ffff:127\./.test(h) || /^(0{1,4}:){7}0{0,3}1$/.test(h);
  return false;
}
