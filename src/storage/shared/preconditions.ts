import type { CoreEvent } from '../../api/index.js';
import type { Preconditions } from '../event-store.js';
import { StorageError } from '../errors.js';

/**
 * checkPreconditions throws ResourceVersionConflicts when `current` (undefined
 * for a missing key, which has an empty uid and resourceVersion, as upstream
 * reads it) fails a precondition. The messages are upstream's.
 */
export function checkPreconditions(key: string, current: CoreEvent | undefined, p: Preconditions | undefined, currentResourceVersion: number): void {
  if (p === undefined) return;
  const uid = current?.metadata.uid ?? '';
  if (p.uid !== undefined && p.uid !== uid) {
    throw new StorageError('ResourceVersionConflicts', `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${uid}`, {
      key,
      currentResourceVersion,
      precondition: { field: 'UID', expected: p.uid, actual: uid },
    });
  }
  const rv = current?.metadata.resourceVersion ?? '';
  if (p.resourceVersion !== undefined && p.resourceVersion !== rv) {
    throw new StorageError(
      'ResourceVersionConflicts',
      `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${rv}`,
      { key, currentResourceVersion, precondition: { field: 'ResourceVersion', expected: p.resourceVersion, actual: rv } },
    );
  }
}
