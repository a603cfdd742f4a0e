import type { CoreEvent } from '../../api/index.js';
import type { IndexedField } from '../event-store.js';
import { StorageError } from '../errors.js';

/**
 * encodeEvent serializes an event for storage. The resourceVersion is left out:
 * it is the row's revision, put back by `decodeEvent`, so an unchanged object
 * encodes to the same text whatever revision it was read at.
 */
export function encodeEvent(event: CoreEvent): string {
  const { resourceVersion: _rv, ...metadata } = event.metadata;
  return JSON.stringify({ ...event, metadata });
}

/** decodeEvent parses stored text and stamps it with its revision. */
export function decodeEvent(json: string, rv: number): CoreEvent {
  const event = JSON.parse(json) as CoreEvent;
  event.metadata.resourceVersion = String(rv);
  if (event.message !== undefined && event.message.length >= SHARED_TEXT_MIN) event.message = sharedText(event.message);
  return event;
}

/** SHARED_TEXT_MIN is the length from which a decoded message is looked up among the recent ones (below it, a copy costs less than the look-up). */
export const SHARED_TEXT_MIN = 4_096;
/** SHARED_TEXTS bounds the long messages kept to share: at most 8 of 3 MiB (the largest body) stay alive. */
const SHARED_TEXTS = 8;
const recentTexts: string[] = [];

/**
 * sharedText returns the string already held for a long message equal to `text`, else keeps `text` as the newest:
 * the versions of an often repeated event decode to one string, not one copy each, so a read of its hundreds of
 * occurrences holds its text once (a decoded copy is garbage at once).
 */
export function sharedText(text: string): string {
  for (let i = 0; i < recentTexts.length; i++) {
    const t = recentTexts[i]!;
    if (t.length === text.length && t === text) {
      if (i > 0) {
        recentTexts.splice(i, 1);
        recentTexts.unshift(t);
      }
      return t;
    }
  }
  recentTexts.unshift(text);
  if (recentTexts.length > SHARED_TEXTS) recentTexts.pop();
  return text;
}

/**
 * withRevision is what decodeEvent(encodeEvent(event), rv) gives for an event of plain JSON data
 * (as decoded from a request), without encoding and parsing it again: a copy of the event and its
 * metadata, with the resourceVersion last. Nested objects are shared with `event`.
 */
export function withRevision(event: CoreEvent, rv: number): CoreEvent {
  const { resourceVersion: _rv, ...metadata } = event.metadata;
  return { ...event, metadata: { ...metadata, resourceVersion: String(rv) } };
}

/** deepFreeze makes an object shared between watchers read-only, so one consumer cannot change what another sees. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * sameContent tells whether two encodings describe the same object, ignoring
 * property order: the update short-circuit must not depend on how a caller
 * happened to build its object.
 */
export function sameContent(a: string, b: string): boolean {
  // Encodings of one object in two property orders are permutations of the same members, so of the same length.
  return a === b || (a.length === b.length && jsonEqual(JSON.parse(a), JSON.parse(b)));
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && jsonEqual(ra[k], rb[k]));
}

/** eventKey is the store key of an object: `<namespace>/<name>`. */
export function eventKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** namespaceRange bounds the keys of one namespace: every key `k` of it has `low < k < high`. */
export function namespaceRange(namespace: string): { low: string; high: string } {
  // '0' is the character after '/', so `<ns>0` sorts after every `<ns>/…` key.
  return { low: `${namespace}/`, high: `${namespace}0` };
}

/** keyOfEvent reads and checks the key of an event to be written; InvalidObject if it has none. */
export function keyOfEvent(event: CoreEvent): string {
  const { namespace, name } = event.metadata ?? {};
  if (typeof namespace !== 'string' || namespace === '' || typeof name !== 'string' || name === '') {
    throw new StorageError('InvalidObject', 'an event to store needs metadata.namespace and metadata.name');
  }
  return eventKey(namespace, name);
}

/** fieldValue reads one indexed field as a field selector sees it: a missing field reads as "". */
export function fieldValue(event: CoreEvent, field: IndexedField): string {
  switch (field) {
    case 'metadata.name':
      return event.metadata.name ?? '';
    case 'involvedObject.kind':
      return event.involvedObject?.kind ?? '';
    case 'involvedObject.namespace':
      return event.involvedObject?.namespace ?? '';
    case 'involvedObject.name':
      return event.involvedObject?.name ?? '';
    case 'involvedObject.uid':
      return event.involvedObject?.uid ?? '';
    case 'reason':
      return event.reason ?? '';
    case 'type':
      return event.type ?? '';
  }
}
