import type { CoreEvent } from '../api/index.js';

// The source and the involved object, in client-go's order; the correlator's key has the object's fieldPath, the spam
// filter's does not (one container's events count against its whole pod).
function sourceAndObject(e: CoreEvent, withFieldPath: boolean): string {
  const io = e.involvedObject;
  return (
    (e.source?.component ?? '') +
    (e.source?.host ?? '') +
    (io.kind ?? '') +
    (io.namespace ?? '') +
    (io.name ?? '') +
    (withFieldPath ? (io.fieldPath ?? '') : '') +
    (io.uid ?? '') +
    (io.apiVersion ?? '')
  );
}

/**
 * getEventKey is the legacy correlation key of one event: source, the involved
 * object including fieldPath, type, reason and message, joined with nothing in
 * between as client-go does.
 */
export function getEventKey(e: CoreEvent): string {
  return sourceAndObject(e, true) + (e.type ?? '') + (e.reason ?? '') + (e.message ?? '');
}

/** getSpamKey groups events for the spam filter: source, involved object (no fieldPath) and type; no reason, no message. */
export function getSpamKey(e: CoreEvent): string {
  return sourceAndObject(e, false) + (e.type ?? '');
}
