import type { CoreEvent } from '../api/index.js';

/**
 * getEventKey is the legacy correlation key of one event: source, the involved
 * object including fieldPath, type, reason and message, joined with nothing in
 * between as client-go does.
 */
export function getEventKey(e: CoreEvent): string {
  const io = e.involvedObject;
  return (
    (e.source?.component ?? '') +
    (e.source?.host ?? '') +
    (io.kind ?? '') +
    (io.namespace ?? '') +
    (io.name ?? '') +
    (io.fieldPath ?? '') +
    (io.uid ?? '') +
    (io.apiVersion ?? '') +
    (e.type ?? '') +
    (e.reason ?? '') +
    (e.message ?? '')
  );
}

/** getSpamKey groups events for the spam filter: source, involved object (no fieldPath) and type; no reason, no message. */
export function getSpamKey(e: CoreEvent): string {
  const io = e.involvedObject;
  return (
    (e.source?.component ?? '') +
    (e.source?.host ?? '') +
    (io.kind ?? '') +
    (io.namespace ?? '') +
    (io.name ?? '') +
    (io.uid ?? '') +
    (io.apiVersion ?? '') +
    (e.type ?? '')
  );
}
