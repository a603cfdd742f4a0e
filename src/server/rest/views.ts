import {
  encodeCoreEvent,
  encodeEventsV1Event,
  toEventsV1,
  CORE_API,
} from '../../api/index.js';
import type { CoreEvent, EventApi, ListMeta } from '../../api/index.js';

/** encodeFor renders a stored event as the wire object of the request's API. */
export function encodeFor(api: EventApi, event: CoreEvent): Record<string, unknown> {
  return api === CORE_API
    ? (encodeCoreEvent(event) as unknown as Record<string, unknown>)
    : (encodeEventsV1Event(toEventsV1(event)) as unknown as Record<string, unknown>);
}

/**
 * listFor renders a page of stored events as the EventList of the request's API. As in
 * kube-apiserver's lists, the items carry no kind and apiVersion of their own: the list's say it.
 */
export function listFor(api: EventApi, items: CoreEvent[], metadata: ListMeta): Record<string, unknown> {
  return { kind: 'EventList', apiVersion: api, metadata, items: items.map((e) => listItem(encodeFor(api, e))) };
}

/** listItemJson is the JSON of a stored event as an item of a list in the request's API (`listFor`'s items). */
export function listItemJson(api: EventApi, event: CoreEvent): string {
  return JSON.stringify(listItem(encodeFor(api, event)));
}

/** listShell is the JSON of an EventList (`listFor`) around its items: the text before the first and after the last. */
export function listShell(api: EventApi, metadata: ListMeta): [Buffer, Buffer] {
  const shell = JSON.stringify({ kind: 'EventList', apiVersion: api, metadata, items: [] });
  return [Buffer.from(shell.slice(0, -2)), Buffer.from(shell.slice(-2))];
}

/** listItem is a wire object as a list's item: without the kind and apiVersion the list states. */
export function listItem(object: Record<string, unknown>): Record<string, unknown> {
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = object;
  return rest;
}
