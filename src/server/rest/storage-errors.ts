import {
  newInsufficientStorage,
  newAlreadyExists,
  newConflict,
  newExpired,
  newInternalError,
  newNotFound,
  newServiceUnavailable,
  newStatusError,
  newTimeout,
  newTooLargeResourceVersion,
  OPTIMISTIC_LOCK_ERROR_MSG,
  StatusError,
} from '../../api/index.js';
import type { EventApi, QualifiedResource } from '../../api/index.js';
import { isStorageError } from '../../storage/index.js';

/** Verb is the operation a storage error happened in; the same error reads differently per verb. */
export type Verb = 'create' | 'get' | 'list' | 'watch' | 'update' | 'patch' | 'delete' | 'continue';

/** EVENTS_RESOURCE is how errors name events: both APIs share the core `events` resource. */
export const EVENTS_RESOURCE: QualifiedResource = { group: '', resource: 'events' };
/** EVENTS_V1_RESOURCE is how events.k8s.io/v1 requests name them: `events.events.k8s.io`. */
export const EVENTS_V1_RESOURCE: QualifiedResource = { group: 'events.k8s.io', resource: 'events' };

/** resourceOf is the resource errors name for a request of an API. */
export function resourceOf(api: EventApi | undefined): QualifiedResource {
  return api === 'events.k8s.io/v1' ? EVENTS_V1_RESOURCE : EVENTS_RESOURCE;
}

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
export function toStatusError(err: unknown, verb: Verb, name = '', api?: EventApi): unknown {
  if (err instanceof StatusError || !isStorageError(err)) return err;
  const keyName = err.key?.split('/')[1] ?? name;
  const resource = resourceOf(api);
  switch (err.code) {
    case 'KeyNotFound':
      return newNotFound(resource, keyName);
    case 'KeyExists':
      return newAlreadyExists(resource, keyName);
    case 'ResourceVersionConflicts': {
      // An update whose resourceVersion is stale reads as the optimistic-lock conflict; a delete's
      // failed precondition is named as kube-apiserver's deleter names it, on the kind.
      const pre = verb === 'delete' ? err.precondition : undefined;
      if (pre === undefined) return newConflict(resource, keyName, OPTIMISTIC_LOCK_ERROR_MSG);
      const why = pre.field === 'UID' ? 'The object might have been deleted and then recreated' : 'The object might have been modified';
      return newStatusError(409, 'Conflict', `Operation cannot be fulfilled on Event "${keyName}": the ${pre.field} in the precondition (${pre.expected}) does not match the ${pre.field} in record (${pre.actual}). ${why}`, { name: keyName, kind: 'Event' });
    }
    case 'TooLargeResourceVersion':
      return newTooLargeResourceVersion(err.resourceVersion ?? 0, err.currentResourceVersion ?? 0);
    case 'ResourceVersionExpired':
      return newExpired(verb === 'watch' ? WATCH_TOO_OLD : verb === 'continue' ? CONTINUE_TOO_OLD : LIST_TOO_OLD);
    case 'Unreachable':
      return newServiceUnavailable(`storage is unavailable: ${err.message}`);
    case 'NoSpace':
      return newInsufficientStorage(`the archive has no space left for this write, which was not stored (reads are still served): ${err.message}`);
    case 'Timeout':
      // kube-apiserver answers a storage request past its deadline with 504 Timeout, which clients may retry.
      return newTimeout(err.message);
    case 'WatcherTooSlow':
      return newExpired(`the watch was ended because the client did not keep up with the changes; list again and watch from the new resourceVersion (${err.message})`);
    case 'InvalidObject':
    case 'Internal':
      return newInternalError(err);
  }
}
