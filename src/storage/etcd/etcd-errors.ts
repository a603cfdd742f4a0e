import { StorageError, isStorageError } from '../errors.js';
import type { EtcdKV } from './options.js';

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** etcdFailure puts a driver error into the storage vocabulary. */
export function etcdFailure(e: unknown): StorageError {
  if (isStorageError(e)) return e;
  const message = messageOf(e);
  if (/required revision has been compacted/.test(message)) {
    return new StorageError('ResourceVersionExpired', `etcd: ${message}`, { cause: e });
  }
  if (/required revision is a future revision/.test(message)) {
    return new StorageError('TooLargeResourceVersion', `etcd: ${message}`, { cause: e });
  }
  const type = typeof e === 'object' && e !== null ? e.constructor.name : '';
  const gone = /^(ClientClosedError|GRPCCancelledError|EtcdWatchStreamEnded)$/.test(type);
  return new StorageError(gone || retryClass(e) !== 'final' ? 'Unreachable' : 'Internal', `etcd: ${message}`, { cause: e });
}

/**
 * retryClass sorts a failed call: `unsent` when etcd certainly did not apply it
 * (no connection, no leader, refused before proposing), `ambiguous` when it may
 * have (a timeout or a leader change while it waited), `final` for anything
 * that another try would not change.
 */
export function retryClass(e: unknown): 'unsent' | 'ambiguous' | 'final' {
  if (isStorageError(e)) return 'final';
  const message = messageOf(e);
  const type = typeof e === 'object' && e !== null ? e.constructor.name : '';
  if (/No connection established|ECONNREFUSED|etcdserver: no leader|etcdserver: too many requests|etcdserver: not capable|circuit breaker is open/i.test(message)) {
    return 'unsent';
  }
  if (
    /^(GRPCUnavailableError|GRPCDeadlineExceededError|BrokenCircuitError)$/.test(type) ||
    /request timed out|leader changed|unhealthy cluster|DEADLINE_EXCEEDED|UNAVAILABLE|ECONNRESET/.test(message)
  ) {
    return 'ambiguous';
  }
  return 'final';
}

/** RETRY_FIRST_DELAY_MS and RETRY_MAX_DELAY_MS pace retries: quick at first, then about twice per election timeout. */
const RETRY_FIRST_DELAY_MS = 25;
const RETRY_MAX_DELAY_MS = 500;

/**
 * withRetry runs one etcd call, trying again (other members, after a pause)
 * while it fails for want of a reachable leader, for up to `budgetMs`. A read
 * is retried after any transient failure; a write only when it certainly was
 * not applied, so a retry never applies a write twice (an ambiguous failure
 * reaches the caller as Unreachable, as upstream answers it).
 */
export async function withRetry<T>(fn: () => Promise<T>, o: { write: boolean; budgetMs: number }): Promise<T> {
  const deadline = Date.now() + o.budgetMs;
  let delay = RETRY_FIRST_DELAY_MS;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      const c = retryClass(e);
      if (c === 'final' || (c === 'ambiguous' && o.write) || Date.now() + delay > deadline) throw e;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, RETRY_MAX_DELAY_MS);
    }
  }
}

/** retryingKV wraps etcd's KV service so that every call retries as `withRetry` says: ranges as reads, transactions and compactions as writes. */
export function retryingKV(kv: EtcdKV, budgetMs: number): EtcdKV {
  return {
    range: (req) => withRetry(() => kv.range(req), { write: false, budgetMs }),
    txn: (req) => withRetry(() => kv.txn(req), { write: true, budgetMs }),
    compact: (req) => withRetry(() => kv.compact(req), { write: true, budgetMs }),
  };
}
