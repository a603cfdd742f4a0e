import {
  newAlreadyExists,
  newConflict,
  newExpired,
  newInternalError,
  newNotFound,
  newServiceUnavailable,
  newTooLargeResourceVersion,
  OPTIMISTIC_LOCK_ERROR_MSG,
  StatusError,
} from '../api/index.js';
import type { QualifiedResource } from '../api/index.js';
import { isStorageError } from '../storage/index.js';

/** Verb is the operation a storage error happened in; the same error reads differently per verb. */
export type Verb = 'create' | 'get' | 'list' | 'watch' | 'update' | 'patch' | 'delete' | 'continue';

/** EVENTS_RESOURCE is how errors name events: both APIs share the core `events` resource. */
export const EVENTS_RESOURCE: QualifiedResource = { group: '', resource: 'events' };

/** LIST_TOO_OLD is upstream's message for a list at a compacted revision. */
export const LIST_TOO_OLD = 'The resourceVersion for the provided list is too old.';
/** WATCH_TOO_OLD is upstream's message for a watch from a compacted revision. */
export const WATCH_TOO_OLD = 'The resourceVersion for the provided watch is too old.';
/** CONTINUE_TOO_OLD is upstream's message for a continue token at a compacted revision. */
export const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/**
 * toStatusError translates a storage error into the API's vocabulary for one
 * verb. Anything that is not a StorageError (or already a StatusError) passes
 * through unchanged, for the final writer to treat as a bug.
 */
export function toStatusError(err: unknown, verb: Verb, name = ''): unknown {
  if (err instanceof StatusError || !isStorageError(err)) return err;
  const keyName = err.key?.split('/')[1] ?? name;
  switch (err.code) {
    case 'KeyNotFound':
      return newNotFound(EVENTS_RESOURCE, keyName);
    case 'KeyExists':
      return newAlreadyExists(EVENTS_RESOURCE, keyName);
    case 'ResourceVersionConflicts':
      return newConflict(EVENTS_RESOURCE, keyName, err.message.startsWith('Precondition failed') ? err.message : OPTIMISTIC_LOCK_ERROR_MSG);
    case 'TooLargeResourceVersion':
      return newTooLargeResourceVersion(err.resourceVersion ?? 0, err.currentResourceVersion ?? 0);
    case 'ResourceVersionExpired':
      return newExpired(verb === 'watch' ? WATCH_TOO_OLD : verb === 'continue' ? CONTINUE_TOO_OLD : LIST_TOO_OLD);
    case 'Unreachable':
      return newServiceUnavailable(`storage is unavailable: ${err.message}`);
    case 'WatcherTooSlow':
      return newExpired(`the watch was ended because the client did not keep up with the changes; list again and watch from the new resourceVersion (${err.message})`);
    case 'InvalidObject':
    case 'Internal':
      return newInternalError(err);
  }
}
