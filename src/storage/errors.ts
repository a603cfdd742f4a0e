/**
 * StorageErrorCode is the storage layer's own vocabulary of failures. The server
 * translates these into API `Status` errors in one place (per verb); storage code
 * never builds a `Status` itself.
 */
export type StorageErrorCode =
  | 'KeyNotFound'
  | 'KeyExists'
  | 'ResourceVersionConflicts'
  | 'InvalidObject'
  | 'TooLargeResourceVersion'
  | 'ResourceVersionExpired'
  | 'WatcherTooSlow'
  | 'Unreachable'
  /** NoSpace: the store's disk (or its database's space quota) is full; reads still work, writes are refused until space is freed. */
  | 'NoSpace'
  /** Timeout: a read ran past the time the store allows it (a PostgreSQL search statement past its statement_timeout) and was cancelled; nothing changed, and a narrower read may succeed. */
  | 'Timeout'
  | 'Internal';

/** FailedPrecondition is the precondition of a write that the stored object failed: which field, what was asked, what was there. */
export interface FailedPrecondition {
  field: 'UID' | 'ResourceVersion';
  /** expected is the value the write's precondition named. */
  expected: string;
  /** actual is the stored object's value (empty for a missing object). */
  actual: string;
}

/** StorageError is what every `EventStore` method throws or rejects with. */
export class StorageError extends Error {
  readonly code: StorageErrorCode;
  /** key is `<namespace>/<name>` where the error concerns one object. */
  readonly key: string | undefined;
  /** resourceVersion is the revision involved (requested or current), where known. */
  readonly resourceVersion: number | undefined;
  /** currentResourceVersion is the store's revision when the error happened, where known. */
  readonly currentResourceVersion: number | undefined;
  /** precondition is the failed precondition of a ResourceVersionConflicts a precondition caused (not a stale update). */
  readonly precondition: FailedPrecondition | undefined;

  constructor(
    code: StorageErrorCode,
    message: string,
    details: { key?: string; resourceVersion?: number; currentResourceVersion?: number; precondition?: FailedPrecondition; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'StorageError';
    this.code = code;
    this.key = details.key;
    this.resourceVersion = details.resourceVersion;
    this.currentResourceVersion = details.currentResourceVersion;
    this.precondition = details.precondition;
  }
}

/** isStorageError tells whether a value is a StorageError (by shape), optionally of one code. */
export function isStorageError(e: unknown, code?: StorageErrorCode): e is StorageError {
  if (typeof e !== 'object' || e === null) return false;
  const c = (e as { code?: unknown; name?: unknown }).code;
  if ((e as { name?: unknown }).name !== 'StorageError' || typeof c !== 'string') return false;
  return code === undefined || c === code;
}
