import { SinkRejected } from '../types.js';

/** DEFAULT_TIMEOUT_MS: a sink that has not answered in 10 s is taken as unavailable, and the batch retried. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * sinkFetch is the one fetch of the HTTP sinks. It never follows a redirect: a
 * sink's requests carry credentials (Authorization, an API key, a tenant, a
 * signature, a Slack URL's secret path) that a redirect would hand to another
 * address, and fetch keeps custom headers across one. A 3xx refuses the records
 * (SinkRejected) naming where it pointed, so the configured URL can be fixed.
 * No answer at all is an Error (unavailable, retried).
 */
export async function sinkFetch(url: string, init: RequestInit & { method: string }): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'manual' });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${init.method} ${redact(url)}: ${cause?.code ?? cause?.message ?? (e as Error).message}`, { cause: e });
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => undefined);
    const location = res.headers.get('location');
    const to = location === null ? 'no Location' : redact(URL.canParse(location, url) ? new URL(location, url).href : location);
    throw new SinkRejected(`${init.method} ${redact(url)}: ${res.status} ${res.statusText}: a redirect to ${to}, not followed (a sink sends its credentials to the configured URL only: configure the final one)`);
  }
  return res;
}

/**
 * postBody sends one request (a POST unless told) and classifies its answer: 2xx is delivered; 408,
 * 429 and 5xx (and no answer) mean the sink is unavailable (an Error, retried
 * until it answers); a redirect or any other status refused the records (SinkRejected).
 */
export async function postBody(
  url: string,
  body: string,
  options: { headers: Record<string, string>; signal: AbortSignal; timeoutMs: number; method?: 'POST' | 'PUT' },
): Promise<string> {
  const method = options.method ?? 'POST';
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]);
  const res = await sinkFetch(url, { method, body, headers: options.headers, signal });
  const text = await res.text().catch(() => '');
  if (res.ok) return text;
  const message = `${method} ${redact(url)}: ${res.status} ${res.statusText}${text !== '' ? `: ${text.slice(0, 300)}` : ''}`;
  if (res.status === 408 || res.status === 429 || res.status >= 500) throw new Error(message);
  throw new SinkRejected(message);
}

/** redact keeps a URL's origin and the start of its path: a Slack webhook URL is its secret. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname.length > 12 ? `${u.pathname.slice(0, 12)}…` : u.pathname}`;
  } catch {
    return '<invalid URL>';
  }
}
