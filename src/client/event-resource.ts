import type { ObjectMeta, Status, WatchEvent } from '../api/index.js';
import { RequestConstructionError } from './request-errors.js';
import type { RestClient } from './rest-client.js';
import { readWatchStream } from './watch-stream.js';

/** PatchType names a patch format and its content type. */
export type PatchType = 'strategic' | 'merge' | 'json';

const patchContentType: Record<PatchType, string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

/** RequestOptions go with any single request. */
export interface RequestOptions {
  signal?: AbortSignal;
}

/** WriteRequestOptions go with create, update and patch. */
export interface WriteRequestOptions extends RequestOptions {
  fieldManager?: string;
  dryRun?: boolean;
}

/** PatchOptions go with patch. */
export interface PatchOptions extends WriteRequestOptions {
  /** patchType defaults to a strategic merge patch, as recorders send. */
  patchType?: PatchType;
}

/** ListOptions select events to list; `namespace` undefined lists all namespaces. */
export interface ListOptions extends RequestOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  timeoutSeconds?: number;
}

/** WatchOptions start a watch. */
export interface WatchOptions extends ListOptions {
  allowWatchBookmarks?: boolean;
}

/**
 * EventResource is the REST surface of one Event API (`/api/v1` or
 * `/apis/events.k8s.io/v1`): create, get, list, watch, update, patch, delete.
 */
export class EventResource<T extends { metadata: ObjectMeta }, L> {
  constructor(
    private readonly rest: RestClient,
    /** prefix is `/api/v1` or `/apis/events.k8s.io/v1`. */
    readonly prefix: string,
  ) {}

  async create(namespace: string, event: T, options: WriteRequestOptions = {}): Promise<T> {
    this.checkNamespace('create', namespace, event);
    return await this.rest.request<T>({
      method: 'POST',
      path: this.path(namespace),
      query: writeQuery(options),
      body: event,
      verb: 'post events',
      ...signal(options),
    });
  }

  async update(namespace: string, event: T, options: WriteRequestOptions = {}): Promise<T> {
    this.checkNamespace('update', namespace, event);
    const name = requireName('update', event.metadata.name);
    return await this.rest.request<T>({
      method: 'PUT',
      path: this.path(namespace, name),
      query: writeQuery(options),
      body: event,
      verb: 'put events',
      ...signal(options),
    });
  }

  async patch(namespace: string, name: string, patch: object, options: PatchOptions = {}): Promise<T> {
    this.checkNamespace('patch', namespace);
    return await this.rest.request<T>({
      method: 'PATCH',
      path: this.path(namespace, requireName('patch', name)),
      query: writeQuery(options),
      body: patch,
      contentType: patchContentType[options.patchType ?? 'strategic'],
      verb: 'patch events',
      ...signal(options),
    });
  }

  async get(namespace: string, name: string, options: RequestOptions = {}): Promise<T> {
    this.checkNamespace('get', namespace);
    return await this.rest.request<T>({ method: 'GET', path: this.path(namespace, requireName('get', name)), verb: 'get events', ...signal(options) });
  }

  async delete(namespace: string, name: string, options: RequestOptions = {}): Promise<Status | T> {
    this.checkNamespace('delete', namespace);
    return await this.rest.request<Status | T>({
      method: 'DELETE',
      path: this.path(namespace, requireName('delete', name)),
      verb: 'delete events',
      ...signal(options),
    });
  }

  async list(options: ListOptions = {}): Promise<L> {
    return await this.rest.request<L>({ method: 'GET', path: this.path(options.namespace), query: listQuery(options), verb: 'list events', ...signal(options) });
  }

  /**
   * watch opens a watch and yields its frames until the server ends it or the
   * signal aborts. An ERROR frame is yielded like any other: its object is a Status.
   */
  async *watch(options: WatchOptions = {}): AsyncGenerator<WatchEvent<T | Status>> {
    const query = listQuery(options);
    query.set('watch', 'true');
    if (options.allowWatchBookmarks) query.set('allowWatchBookmarks', 'true');
    const res = await this.rest.stream({ method: 'GET', path: this.path(options.namespace), query, verb: 'watch events', ...signal(options) });
    yield* readWatchStream<T | Status>(res);
  }

  private path(namespace?: string, name?: string): string {
    const base = namespace === undefined || namespace === '' ? `${this.prefix}/events` : `${this.prefix}/namespaces/${encodeURIComponent(namespace)}/events`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  private checkNamespace(verb: string, namespace: string, event?: T): void {
    if (namespace === '') throw new RequestConstructionError(`can't ${verb} an event with empty namespace`);
    const own = event?.metadata.namespace;
    if (own !== undefined && own !== '' && own !== namespace) {
      throw new RequestConstructionError(`can't ${verb} an event with namespace '${own}' in namespace '${namespace}'`);
    }
  }
}

function requireName(verb: string, name: string | undefined): string {
  if (name === undefined || name === '') throw new RequestConstructionError(`can't ${verb} an event without a name`);
  return name;
}

function signal(o: RequestOptions): { signal?: AbortSignal } {
  return o.signal !== undefined ? { signal: o.signal } : {};
}

function writeQuery(o: WriteRequestOptions): URLSearchParams {
  const q = new URLSearchParams();
  if (o.fieldManager) q.set('fieldManager', o.fieldManager);
  if (o.dryRun) q.set('dryRun', 'All');
  return q;
}

/** listQuery is a list's or watch's query string: the selectors, the page and the resourceVersion it reads at. */
export function listQuery(o: ListOptions): URLSearchParams {
  const q = new URLSearchParams();
  if (o.labelSelector) q.set('labelSelector', o.labelSelector);
  if (o.fieldSelector) q.set('fieldSelector', o.fieldSelector);
  if (o.limit) q.set('limit', String(o.limit));
  if (o.continue) q.set('continue', o.continue);
  if (o.resourceVersion !== undefined) q.set('resourceVersion', o.resourceVersion);
  if (o.resourceVersionMatch) q.set('resourceVersionMatch', o.resourceVersionMatch);
  if (o.timeoutSeconds) q.set('timeoutSeconds', String(o.timeoutSeconds));
  return q;
}
