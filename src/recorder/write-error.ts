import { isStatusError } from '../api/index.js';

/** WriteErrorClass says what to do after a failed write. */
export interface WriteErrorClass {
  /** retry: try again later (transport failure, 429, 5xx). */
  retry: boolean;
  /** retryAfterMs is the server's own `Retry-After`, when it gave one. */
  retryAfterMs?: number;
  /** quiet: an expected refusal, logged at debug rather than error. */
  quiet: boolean;
  /** code is the HTTP status when the server answered. */
  code?: number;
}

const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/**
 * classifyWriteError decides whether a failed write is retried. A Status answer
 * is final, except 429 and 5xx: those say "later", and client-go's REST client
 * retries them underneath its recorder. A request that could not be built is
 * final. Anything else is a transport failure and is retried. AlreadyExists is
 * retried only for a series (its PATCH found nothing and its create raced with
 * the first occurrence's create).
 */
export function classifyWriteError(err: unknown, isSeries: boolean): WriteErrorClass {
  if (isStatusError(err)) {
    const s = err.status;
    const code = s.code ?? 0;
    const afterSeconds = s.details?.retryAfterSeconds;
    const retryAfterMs = typeof afterSeconds === 'number' && afterSeconds > 0 ? afterSeconds * 1000 : undefined;
    if (code === 429 || code >= 500) return { retry: true, quiet: false, code, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    if (s.reason === 'AlreadyExists') return { retry: isSeries, quiet: true, code };
    const terminating = s.details?.causes?.some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE) ?? false;
    return { retry: false, quiet: terminating, code };
  }
  if (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'RequestConstructionError') {
    return { retry: false, quiet: false };
  }
  return { retry: true, quiet: false };
}

/** isNotFoundAnswer tells whether the server answered 404 (client-go's IsKeyNotFoundError). */
export function isNotFoundAnswer(err: unknown): boolean {
  return isStatusError(err) && err.status.code === 404;
}
