import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DEFAULT_MAX_ANSWER_BYTES,
  jsonBytes,
  keepWithin,
  eventTable,
  newBadRequest,
  newMethodNotAllowed,
  newUnsupportedMediaType,
  successStatus,
} from '../../api/index.js';
import type { CoreEvent, EventApi, ListMeta } from '../../api/index.js';
import type { Clock, Logger } from '../../internal/index.js';
import type { EventStore, Preconditions } from '../../storage/index.js';
import { hasVersionedReads } from '../../storage/index.js';
import { bodyText, checkRouteAccept, LIST_PRODUCES, mediaTypeOf, negotiateOutput, OBJECT_PRODUCES, readBody, sendError, sendJsonText, sendObject } from '../http/http-io.js';
import type { OutputFormat } from '../http/http-io.js';
import { cutListMeta, listEvents } from './list.js';
import type { ServerMetrics } from '../http/metrics.js';
import { patchTypeOf } from './patch.js';
import { parseListQuery, parseWriteQuery } from './query.js';
import type { ListQuery, WriteOptionsKind } from './query.js';
import { compileFilter } from './registry.js';
import type { EventRegistry, WriteContext } from './registry.js';
import { ReadAhead } from '../render/read-ahead.js';
import { DEFAULT_RENDER_CACHE_MIB, RenderedVersions } from '../render/rendered-versions.js';
import { warmRendered } from '../render/render-warm.js';
import { WrittenRows } from '../render/render-written.js';
import type { WarmResult } from '../render/render-warm.js';
import type { AnswerBound, RenderAs } from '../render/rendered-versions.js';
import { resourceOf, toStatusError } from './storage-errors.js';
import { requestTarget } from '../../auth/index.js';
import { encodeFor, listFor, listItemJson, listShell } from './views.js';
import { serveWatch } from './watch.js';

/** EventsHandlerOptions wire an EventsHandler. */
export interface EventsHandlerOptions {
  registry: EventRegistry;
  store: EventStore;
  clock: Clock;
  logger: Logger;
  metrics: ServerMetrics;
  maxBodyBytes?: number | undefined;
  /** renderCacheBytes bounds the rendered versions lists are spliced from (default DEFAULT_RENDER_CACHE_MIB; 0 keeps none). */
  renderCacheBytes?: number | undefined;
  /** privileged tells whether a request's user may write the archive's own labels and annotations. */
  privileged?: ((req: IncomingMessage) => boolean) | undefined;
  /** maxAnswerBytes bounds a list answer's items (default DEFAULT_MAX_ANSWER_BYTES): past it the page ends short with a continue token. */
  maxAnswerBytes?: number | undefined;
}

/** UNKEPT renders the lists of a store whose resourceVersions may name more than one version: nothing is kept. */
const UNKEPT = new RenderedVersions(0);

const BODY_TYPES = ['application/json', 'application/yaml'];

/** DELETE_COLLECTION_PAGE is how many events a deletecollection lists at a time without a limit (upstream's page). */
const DELETE_COLLECTION_PAGE = 10_000;
/** DELETE_AT_ONCE is how many of a page's deletes are asked together (a group commit's worth, a bounded load on etcd). */
const DELETE_AT_ONCE = 500;

/**
 * EventsHandler is the HTTP face of the events resource in both API groups:
 * it parses requests, calls the registry and renders answers in the API and
 * format (JSON, YAML, Table) the client asked for.
 */
export class EventsHandler {
  private readonly rendered: RenderedVersions;
  private readonly ahead = new ReadAhead();
  /** written renders the rows of the versions this server writes, where the store's resourceVersions name one version (`listVersions`). */
  private readonly written: WrittenRows | undefined;

  private readonly maxAnswerBytes: number;

  constructor(private readonly o: EventsHandlerOptions) {
    this.maxAnswerBytes = o.maxAnswerBytes !== undefined && o.maxAnswerBytes > 0 ? o.maxAnswerBytes : DEFAULT_MAX_ANSWER_BYTES;
    this.rendered = new RenderedVersions(o.renderCacheBytes ?? DEFAULT_RENDER_CACHE_MIB * 1024 * 1024);
    if (hasVersionedReads(o.store)) this.written = new WrittenRows(this.rendered, (rows) => o.metrics.listRendered.inc({ by: 'write' }, rows));
  }

  /** keepRendered queues the Table row of a version a write stored (not a dry run, which stored nothing). */
  private keepRendered(ctx: WriteContext, object: CoreEvent): void {
    if (!ctx.dryRun) this.written?.add(object);
  }

  /**
   * warm renders the store's current Table rows into the render cache for at most `maxMs` (see
   * `warmRendered`), counted as rendered at startup; undefined when nothing was warmed.
   */
  async warm(maxMs: number): Promise<WarmResult | undefined> {
    const before = this.rendered.misses;
    const result = await warmRendered(this.o.store, this.rendered, { maxMs });
    if (result !== undefined) this.o.metrics.listRendered.inc({ by: 'startup' }, this.rendered.misses - before);
    return result;
  }

  /** collection serves `/…/events` and `/…/namespaces/<ns>/events` (and their /watch/ forms). */
  collection(req: IncomingMessage, res: ServerResponse, api: EventApi, namespace: string | undefined, watchPath: boolean): void {
    const method = req.method ?? 'GET';
    const verb = method === 'GET' ? 'LIST' : method === 'POST' ? 'CREATE' : method === 'DELETE' ? 'DELETECOLLECTION' : method;
    this.run(req, res, verb, async (params) => {
      if (method === 'GET') {
        checkRouteAccept(req.headers.accept, LIST_PRODUCES);
        return this.list(req, res, api, namespace, params, requestTarget(req).watch);
      }
      if (watchPath || namespace === undefined || (method !== 'POST' && method !== 'DELETE')) throw newMethodNotAllowed();
      checkRouteAccept(req.headers.accept, OBJECT_PRODUCES);
      if (method === 'POST') return this.create(req, res, api, namespace, params);
      return this.deleteCollection(req, res, api, namespace, params);
    });
  }

  /** item serves `/…/namespaces/<ns>/events/<name>`. */
  item(req: IncomingMessage, res: ServerResponse, api: EventApi, namespace: string, name: string, watchPath: boolean): void {
    const method = req.method ?? 'GET';
    this.run(req, res, method === 'GET' ? (watchPath ? 'WATCH' : 'GET') : method, async (params) => {
      if (watchPath) {
        if (method !== 'GET') throw newMethodNotAllowed();
        checkRouteAccept(req.headers.accept, LIST_PRODUCES);
        return this.list(req, res, api, namespace, params, true, name);
      }
      if (method !== 'GET' && method !== 'PUT' && method !== 'PATCH' && method !== 'DELETE') throw newMethodNotAllowed();
      // The router's check comes first, and each answer's format is settled before anything is written.
      checkRouteAccept(req.headers.accept, OBJECT_PRODUCES);
      if (method === 'GET') {
        if (requestTarget(req).watch) return this.list(req, res, api, namespace, params, true, name);
        const format = negotiateOutput(req.headers.accept, true);
        const event = await this.o.registry.get(namespace, name, api);
        return this.render(res, 200, api, [event], format, undefined, false);
      }
      const format = negotiateOutput(req.headers.accept, false);
      switch (method) {
        case 'PUT': {
          const ctx = this.writeContext(req, api, namespace, params, 'UpdateOptions');
          const text = await this.body(req);
          const result = await this.o.registry.update(text, name, ctx);
          sendObject(res, result.created ? 201 : 200, encodeFor(api, result.object), format, result.warnings);
          return this.keepRendered(ctx, result.object);
        }
        case 'PATCH': {
          const type = patchTypeOf(mediaTypeOf(req.headers['content-type']));
          const ctx = this.writeContext(req, api, namespace, params, 'PatchOptions');
          const text = (await readBody(req, this.o.maxBodyBytes)).toString('utf8');
          const result = await this.o.registry.patch(text, type, name, ctx);
          sendObject(res, 200, encodeFor(api, result.object), format, result.warnings);
          return this.keepRendered(ctx, result.object);
        }
        default: {
          const { preconditions, dryRun } = await this.deleteOptions(req, params);
          const deleted = await this.o.registry.delete(namespace, name, preconditions, dryRun, api);
          const group = resourceOf(api).group;
          return sendObject(res, 200, successStatus({ name, ...(group !== '' ? { group } : {}), kind: 'events', uid: deleted.metadata.uid }), format);
        }
      }
    });
  }

  private run(req: IncomingMessage, res: ServerResponse, verb: string, fn: (params: URLSearchParams) => Promise<void>): void {
    const started = performance.now();
    const url = req.url ?? '';
    const params = requestTarget(req).params;
    res.once('finish', () => {
      this.o.metrics.requests.inc({ verb, resource: 'events', code: String(res.statusCode) });
    });
    const observe = (): void => this.o.metrics.requestDuration.observe({ verb, resource: 'events' }, (performance.now() - started) / 1000);
    // One promise past the handler's own (a catch and then a finally were two, each a turn of the microtask queue).
    fn(params).then(observe, (e: unknown) => {
      sendError(res, e, this.o.logger, `${req.method} ${url}`);
      observe();
    });
  }

  private writeContext(req: IncomingMessage, api: EventApi, namespace: string, params: URLSearchParams, kind: WriteOptionsKind): WriteContext {
    const q = parseWriteQuery(params, kind);
    return { api, namespace, fieldValidation: q.fieldValidation, dryRun: q.dryRun, privileged: this.o.privileged?.(req) ?? false };
  }

  /** body reads a create or update body as JSON: the bytes themselves (the decoder reads bytes), or YAML converted to JSON text. */
  private async body(req: IncomingMessage): Promise<string | Uint8Array> {
    const type = mediaTypeOf(req.headers['content-type']);
    if (type !== '' && !BODY_TYPES.includes(type)) throw newUnsupportedMediaType(BODY_TYPES);
    const body = await readBody(req, this.o.maxBodyBytes);
    if (body.length === 0) throw newBadRequest('the body of the request was empty');
    return type === 'application/yaml' ? bodyText(body, type) : body;
  }

  private async create(req: IncomingMessage, res: ServerResponse, api: EventApi, namespace: string, params: URLSearchParams): Promise<void> {
    const ctx = this.writeContext(req, api, namespace, params, 'CreateOptions');
    const format = negotiateOutput(req.headers.accept, false);
    const text = await this.body(req);
    const result = await this.o.registry.create(text, ctx);
    sendObject(res, 201, encodeFor(api, result.object), format, result.warnings);
    this.keepRendered(ctx, result.object);
  }

  private async list(
    req: IncomingMessage,
    res: ServerResponse,
    api: EventApi,
    namespace: string | undefined,
    params: URLSearchParams,
    watch: boolean,
    name?: string,
  ): Promise<void> {
    const query = parseListQuery(params, watch);
    const format = negotiateOutput(req.headers.accept, true);
    const filter = compileFilter(api, namespace, query.fieldSelector, query.labelSelector);
    if (query.watch) {
      const watchReq = { api, query, filter, format, ...(name !== undefined ? { name } : {}) };
      return serveWatch(req, res, {
        store: this.o.store,
        clock: this.o.clock,
        logger: this.o.logger,
        renderObject: (e, f) => JSON.stringify(this.renderOne(api, e, f, query)),
        onOpen: () => this.o.metrics.watchers.inc(),
        onClose: () => this.o.metrics.watchers.dec(),
        onFrame: (type) => this.o.metrics.watchEvents.inc({ type }),
      }, watchReq);
    }
    const pagingCold = this.ahead.claim(query.continue);
    const page = await listEvents(this.o.store, api, query, filter);
    // The rows of the latest writes wait for an idle moment: a Table listing reads them first.
    if (format.kind === 'table' && page.keyed) this.written?.flush();
    const rendered = page.keyed ? this.rendered : UNKEPT;
    const includeObject = query.includeObject ?? 'Metadata';
    const missed = rendered.misses;
    let body: Buffer | undefined;
    let items: CoreEvent[] | undefined;
    try {
      // An item's object is read here, past the store's list: its failure speaks the storage vocabulary.
      const bound: AnswerBound = { maxBytes: this.maxAnswerBytes, cut: (kept) => cutListMeta(page, kept, namespace, filter.hasSelectors) };
      if (format.kind === 'json') body = rendered.list(api, page.items, page.metadata, bound);
      else if (format.kind === 'table') body = rendered.table(api, page.items, { now: this.o.clock.now(), includeObject, listMeta: page.metadata }, bound);
      else {
        const all = page.items.map((v) => v.object());
        const kept = keepWithin(all.map(jsonBytes), this.maxAnswerBytes);
        items = all.slice(0, kept);
        if (kept < all.length) page.metadata = cutListMeta(page, kept, namespace, filter.hasSelectors);
      }
    } catch (e) {
      throw toStatusError(e, 'list', '', api);
    }
    if (body === undefined) return this.render(res, 200, api, items ?? [], format, page.metadata, true, query);
    sendJsonText(res, 200, body);
    const cold = rendered.misses - missed;
    if (rendered === UNKEPT || (cold === 0 && !pagingCold)) return;
    if (cold > 0) this.o.metrics.listRendered.inc({ by: 'request' }, cold);
    const next = page.metadata.continue;
    if (next === undefined || rendered.maxBytes === 0) return;
    // A page read cold (or read ahead because the one before was): the next one, likely cold too, is
    // rendered while the client reads this one.
    const nextQuery: ListQuery = { ...query, resourceVersion: undefined, continue: next };
    const as: RenderAs = format.kind === 'table' ? { table: true, includeObject } : { table: false };
    this.ahead.start(next, async () => (await listEvents(this.o.store, api, nextQuery, filter)).items, (slice) => {
      const before = rendered.misses;
      rendered.prepare(api, slice, as);
      this.o.metrics.listRendered.inc({ by: 'read-ahead' }, rendered.misses - before);
    });
  }

  private renderOne(api: EventApi, e: CoreEvent, format: OutputFormat, query: ListQuery): unknown {
    if (format.kind !== 'table') return encodeFor(api, e);
    return this.table(api, [e], { resourceVersion: e.metadata.resourceVersion }, query);
  }

  private table(api: EventApi, items: CoreEvent[], listMeta: ListMeta, query: ListQuery | undefined): unknown {
    return eventTable(items, {
      now: this.o.clock.now(),
      includeObject: query?.includeObject ?? 'Metadata',
      listMeta,
      encodeObject: (e: CoreEvent) => encodeFor(api, e),
    });
  }

  private render(
    res: ServerResponse,
    code: number,
    api: EventApi,
    items: CoreEvent[],
    format: OutputFormat,
    listMeta: ListMeta | undefined,
    isList: boolean,
    query?: ListQuery,
  ): void {
    if (format.kind === 'table') {
      // A Table of one object carries the object's resourceVersion, as kube-apiserver's does.
      const meta = listMeta ?? (items.length === 1 ? { resourceVersion: items[0]!.metadata.resourceVersion } : {});
      return sendObject(res, code, this.table(api, items, meta, query), format);
    }
    if (!isList) return sendObject(res, code, encodeFor(api, items[0]!), format);
    return sendObject(res, code, listFor(api, items, listMeta ?? {}), format);
  }

  private async deleteOptions(req: IncomingMessage, params: URLSearchParams): Promise<{ preconditions: Preconditions; dryRun: boolean }> {
    const preconditions: Preconditions = {};
    let dryRun = params.getAll('dryRun').includes('All');
    const body = await readBody(req, this.o.maxBodyBytes);
    if (body.length > 0) {
      let opts: { preconditions?: { uid?: unknown; resourceVersion?: unknown }; dryRun?: unknown };
      try {
        opts = JSON.parse(bodyText(body, req.headers['content-type'])) as typeof opts;
      } catch (e) {
        throw newBadRequest(`error decoding DeleteOptions: ${(e as Error).message}`);
      }
      if (typeof opts.preconditions?.uid === 'string') preconditions.uid = opts.preconditions.uid;
      if (typeof opts.preconditions?.resourceVersion === 'string') preconditions.resourceVersion = opts.preconditions.resourceVersion;
      if (Array.isArray(opts.dryRun) && opts.dryRun.includes('All')) dryRun = true;
    }
    return { preconditions, dryRun };
  }

  /**
   * deleteCollection deletes what the request would list, as kube-apiserver does:
   * with a limit, that page alone (the answer is the page, with its continue
   * token); without one, page after page of DELETE_COLLECTION_PAGE events from the
   * first page's revision. The answer lists the events as they were listed (one
   * deleted meanwhile too), under the first page's list metadata. A page's deletes
   * go DELETE_AT_ONCE together, in the page's (key) order, where one at a time each
   * waited for its own commit: SQLite, PostgreSQL and memory commit them as asked, in group
   * commits; etcd commits each on its own, in its order (as kube-apiserver's
   * deletecollection does with several workers).
   */
  private async deleteCollection(req: IncomingMessage, res: ServerResponse, api: EventApi, namespace: string, params: URLSearchParams): Promise<void> {
    const query = parseListQuery(params);
    const filter = compileFilter(api, namespace, query.fieldSelector, query.labelSelector);
    // A Table, too, when asked (as kubectl asks for lists): kube-apiserver renders this answer as it renders a list.
    const format = negotiateOutput(req.headers.accept, true);
    const { dryRun } = await this.deleteOptions(req, params);
    const paged = query.limit > 0;
    let page = await listEvents(this.o.store, api, paged ? query : { ...query, limit: DELETE_COLLECTION_PAGE }, filter);
    const metadata = page.metadata;
    // As JSON, each page's items are kept as UTF-8 bytes, off the heap, and its events dropped;
    // a Table or YAML (rare on the wire) is rendered from the events at the end, as a list is.
    const texts: Buffer[] = [];
    const kept: CoreEvent[] = [];
    for (;;) {
      const events = page.items.map((v) => v.object());
      for (let i = 0; i < events.length; i += DELETE_AT_ONCE) {
        const deletes = events.slice(i, i + DELETE_AT_ONCE).map((e) => this.o.registry.delete(namespace, e.metadata.name ?? '', {}, dryRun, api));
        // An event deleted (or expired) meanwhile is already gone: that is the goal.
        const failed = (await Promise.allSettled(deletes)).find((o) => o.status === 'rejected' && (o.reason as { status?: { reason?: string } }).status?.reason !== 'NotFound');
        if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
      }
      if (format.kind !== 'json') kept.push(...events);
      else if (events.length > 0) texts.push(Buffer.from(`${texts.length > 0 ? ',' : ''}${events.map((e) => listItemJson(api, e)).join(',')}`));
      if (paged || page.metadata.continue === undefined) break;
      page = await listEvents(this.o.store, api, { ...query, limit: DELETE_COLLECTION_PAGE, continue: page.metadata.continue, resourceVersion: undefined, resourceVersionMatch: undefined }, filter);
    }
    if (format.kind !== 'json') return this.render(res, 200, api, kept, format, metadata, true, query);
    const [open, close] = listShell(api, metadata);
    sendJsonText(res, 200, [open, ...texts, close]);
  }
}
