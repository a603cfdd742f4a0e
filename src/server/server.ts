import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type FindMyWayModule from 'find-my-way';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { ARCHIVE_API, CORE_API, DEFAULT_MAX_ANSWER_BYTES, EVENTS_API, newInternalError, newMethodNotAllowed, newPathNotFound, newTooManyRequests } from '../api/index.js';
import type { EventApi, StatusError } from '../api/index.js';
import { requestTarget } from '../auth/index.js';
import { noopLogger, realClock, requireCjs } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { EventStore } from '../storage/index.js';
import { registerArchiveRoutes } from './archive/archive-routes.js';
import { applyLimits, resolveLimits, serverOptionsOf } from './http/connection-limits.js';
import { createHandshakeRenewal } from './http/handshake-renewal.js';
import type { ConnectionLimits } from './http/connection-limits.js';
import { registerDocuments } from './discovery/documents.js';
import { isHealthRequest } from './http/health-slots.js';
import { apiGroup } from './discovery/discovery.js';
import { EventsHandler } from './rest/events-handler.js';
import { sendError, sendPlainNotFound } from './http/http-io.js';
import { registerKnownKinds } from './discovery/known-kinds.js';
import { checkArchiveRead, checkBodyType, checkHost, checkOrigin } from './http/request-guard.js';
import type { HostPolicy } from './http/request-guard.js';
import { createServerMetrics } from './http/metrics.js';
import type { ServerMetrics } from './http/metrics.js';
import { EventRegistry } from './rest/registry.js';
import { DEFAULT_RENDER_CACHE_WARM_MS } from './render/render-warm.js';
import { registerIncidentRoutes } from './archive/incident-routes.js';
import type { IncidentReader } from './archive/incident-routes.js';
import { registerSearchRoutes } from './archive/search-routes.js';
import { registerTimelineRoutes } from './archive/timeline-routes.js';
import type { TimelineReader } from './archive/timeline-routes.js';
import { registerUiAssets } from './http/ui-assets.js';

const FindMyWay = requireCjs('find-my-way') as typeof FindMyWayModule;

/** ServerOptions configure an events API server. */
export interface ServerOptions {
  store: EventStore;
  /** eventTtlSeconds is `--event-ttl` in seconds (default 3600); 0 keeps events forever. */
  eventTtlSeconds?: number;
  clock?: Clock;
  logger?: Logger;
  /** maxBodyBytes caps request bodies (default 3 MiB, as upstream). */
  maxBodyBytes?: number;
  /** keventsVersion is reported in /version's gitVersion build metadata. */
  keventsVersion?: string;
  /** readinessChecks join the storage check of /readyz (e.g. a mirror whose watch must not stall). */
  readinessChecks?: ReadinessCheck[];
  /** timeline builds the timeline the web UI draws (GET …/archive.kevents.io/v1alpha1/timeline); without it that is NotFound. */
  timeline?: TimelineReader;
  /** incidents builds the incidents the web UI lists (GET …/archive.kevents.io/v1alpha1/incidents); without it that is NotFound. */
  incidents?: IncidentReader;
  /** gate admits or refuses each request before it is routed (authentication and authorization). */
  gate?: RequestGate;
  /** tls serves HTTPS with this certificate chain and key (PEM), and the front proxy's client CA; swap the pair later with `setTls`. */
  tls?: ServerTls;
  /** renderCacheBytes bounds the wire bytes of listed versions kept for later lists (default DEFAULT_RENDER_CACHE_MIB MiB; 0 keeps none). */
  renderCacheBytes?: number;
  /**
   * renderCacheWarmMs bounds the time `listen` spends rendering the store's current Table rows into the
   * render cache before it listens (default DEFAULT_RENDER_CACHE_WARM_MS; 0 warms nothing).
   */
  renderCacheWarmMs?: number;
  /**
   * maxAnswerBytes bounds the JSON of one answer of a list, search, occurrences, timeline or incidents (default
   * DEFAULT_MAX_ANSWER_BYTES): a page past it ends short with a continue token, a timeline or incident list says
   * what it left out. An answer always holds its first item.
   */
  maxAnswerBytes?: number;
  /** limits bound the headers, the time to send a request and the open connections (see `ConnectionLimits`). */
  limits?: ConnectionLimits;
  /** metricsText answers /metrics in place of this server's own registry (a worker answers for every process of `serve --workers`). */
  metricsText?: () => Promise<{ contentType: string; text: string }>;
  /**
   * allowedHosts are the Host names answered without a gate besides IP literals, `localhost`,
   * `*.localhost` and the listen host (`--allowed-host`: a port-forward's or a proxy's name).
   */
  allowedHosts?: readonly string[];
}

/**
 * RequestGate decides whether a request goes on: undefined lets it through, a
 * StatusError is the answer (a 401 or 403). It is declared here and satisfied
 * by the auth module, whose request parser the server shares (so the gate and
 * the handlers read one target alike).
 */
export interface RequestGate {
  admit(req: IncomingMessage): StatusError | undefined | Promise<StatusError | undefined>;
  /** privileged is true when an admitted request's user may write the archive's own labels and annotations. */
  privileged?(req: IncomingMessage): boolean;
}

/** TlsPair is a PEM certificate chain and its private key. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

/**
 * ServerTls is the server's certificate and key and, where a front proxy is trusted, the CA its
 * client certificate is verified against (`--requestheader-client-ca-file`): a client certificate
 * is then asked for but not required, and the gate decides what a verified one is worth.
 */
export interface ServerTls extends TlsPair {
  clientCa?: Buffer;
}

/** secureContext is the node:tls secure context of a ServerTls. */
function secureContext(tls: ServerTls): { cert: Buffer; key: Buffer; ca?: Buffer } {
  const { cert, key, clientCa } = tls;
  return clientCa === undefined ? { cert, key } : { cert, key, ca: clientCa };
}

/** secureOptions are the node:https server options of a ServerTls. */
function secureOptions(tls: ServerTls): { cert: Buffer; key: Buffer; ca?: Buffer; requestCert?: boolean; rejectUnauthorized?: boolean } {
  return tls.clientCa === undefined ? secureContext(tls) : { ...secureContext(tls), requestCert: true, rejectUnauthorized: false };
}

/** ReadinessCheck is one named check of /readyz. */
export interface ReadinessCheck {
  name: string;
  check(): { ready: boolean; message: string };
}

/** KeventsServer is a running-or-not events API server. */
export interface KeventsServer {
  /** handle answers one request; usable with any node:http server. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** listen binds a TCP address and resolves with the bound address. */
  listen(host: string, port: number): Promise<AddressInfo>;
  /** close stops accepting requests, ends open watches and resolves when done. */
  close(): Promise<void>;
  /**
   * setTls replaces the certificate of an HTTPS server (new handshakes use it; open connections keep theirs) and,
   * given one, the front proxy's client CA: a different CA also closes the connections open (idle ones at once,
   * busy ones after their answer), whose client certificates the old CA verified.
   */
  setTls(tls: ServerTls): void;
  readonly metrics: ServerMetrics;
  readonly httpServer: Server | HttpsServer;
  /** ui is true when the built web UI is served at `/`. */
  readonly ui: boolean;
}

/** DEFAULT_EVENT_TTL_SECONDS is kube-apiserver's `--event-ttl` default of one hour. */
export const DEFAULT_EVENT_TTL_SECONDS = 3600;

/**
 * createEventsServer composes the Kubernetes REST surface of events over an
 * EventStore. It never knows which backend it runs on.
 */
export function createEventsServer(options: ServerOptions): KeventsServer {
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? noopLogger;
  const metrics = createServerMetrics();
  const registry = new EventRegistry({
    store: options.store,
    eventTtlSeconds: options.eventTtlSeconds ?? DEFAULT_EVENT_TTL_SECONDS,
    clock,
  });
  const gate = options.gate;
  const events = new EventsHandler({
    registry,
    store: options.store,
    clock,
    logger,
    metrics,
    maxBodyBytes: options.maxBodyBytes,
    renderCacheBytes: options.renderCacheBytes,
    maxAnswerBytes: options.maxAnswerBytes,
    privileged: (req) => gate?.privileged?.(req) ?? false,
  });

  /** warm fills the render cache before the server listens, as kube-apiserver fills its watch caches before it serves. */
  const warm = async (): Promise<void> => {
    try {
      const w = await events.warm(options.renderCacheWarmMs ?? DEFAULT_RENDER_CACHE_WARM_MS);
      if (w !== undefined && w.rows > 0) logger.info('render cache warmed', { rows: w.rows, bytes: w.bytes, ms: Math.round(w.ms), stoppedBy: w.stoppedBy });
    } catch (e) {
      // A cache that could not be warmed is filled by the lists themselves: not a reason not to serve.
      logger.warn('render cache not warmed', { error: e instanceof Error ? e.message : String(e) });
    }
  };

  const router: Router<HTTPVersion.V1> = FindMyWay({
    ignoreTrailingSlash: true,
    maxParamLength: 1024,
    // The query is read once, by the shared request parser: the router's own copy would be a second pass over up to 1 MiB.
    querystringParser: () => ({}),
    defaultRoute: (req, res) => {
      // Under /apis/<group>/ a group that is not served is not a resource path at all: kube-apiserver's
      // handler chain ends in Go's plain-text NotFound there.
      const group = /^\/apis\/([^/?]+)\/[^?]/.exec(req.url ?? '')?.[1];
      if (group !== undefined && apiGroup(group) === undefined) return sendPlainNotFound(res);
      sendError(res, newPathNotFound(), logger, req.url ?? '');
    },
  });

  let ready = false;
  const health = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('ok');
  };
  for (const path of ['/healthz', '/livez']) router.on('GET', path, health);
  router.on('GET', '/readyz', (req, res) => {
    // As kube-apiserver: each check by name, why one fails only with ?verbose, which the gate
    // (where there is one) lets through for an authorized client alone; the log always has it.
    const verbose = requestTarget(req).params.has('verbose');
    const checks = [{ name: 'storage', ready, message: 'not ready' }, ...(options.readinessChecks ?? []).map((c) => ({ name: c.name, ...c.check() }))];
    const failed = checks.filter((c) => !c.ready);
    if (failed.length === 0 && !verbose) return health(req, res);
    const lines = checks.map((c) => (c.ready ? `[+]${c.name} ok` : `[-]${c.name} failed: ${verbose ? c.message : 'reason withheld'}`));
    if (failed.length > 0) logger.warn('readyz check failed', { checks: failed.map((c) => `${c.name}: ${c.message}`).join('; ') });
    res.writeHead(failed.length === 0 ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.end(`${lines.join('\n')}\nreadyz check ${failed.length === 0 ? 'passed' : 'failed'}`);
  });
  router.on('GET', '/metrics', (_req, res) => {
    if (options.metricsText !== undefined) {
      options.metricsText().then(
        ({ contentType, text }) => {
          res.writeHead(200, { 'Content-Type': contentType });
          res.end(text);
        },
        (e: unknown) => sendError(res, e, logger, '/metrics'),
      );
      return;
    }
    metrics.registry().then(
      async (registry) => {
        const text = await registry.metrics();
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(text);
      },
      (e: unknown) => sendError(res, e, logger, '/metrics'),
    );
  });

  const maxAnswerBytes = options.maxAnswerBytes !== undefined && options.maxAnswerBytes > 0 ? options.maxAnswerBytes : DEFAULT_MAX_ANSWER_BYTES;
  registerArchiveRoutes(router, { store: options.store, clock, logger, metrics, maxAnswerBytes });
  registerTimelineRoutes(router, { timeline: options.timeline, logger, metrics, maxAnswerBytes });
  registerSearchRoutes(router, { store: options.store, clock, logger, metrics, maxAnswerBytes });
  registerIncidentRoutes(router, { incidents: options.incidents, clock, logger, metrics, maxAnswerBytes });
  registerDocuments(router, { logger, keventsVersion: options.keventsVersion ?? '0.0.0' });
  registerKnownKinds(router, { store: options.store, logger });
  const ui = registerUiAssets(router, { logger });

  const apis: [string, EventApi][] = [
    ['/api/v1', CORE_API],
    ['/apis/events.k8s.io/v1', EVENTS_API],
  ];
  const allMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  for (const [prefix, api] of apis) {
    router.on([...allMethods], `${prefix}/events`, (req, res) => events.collection(req, res, api, undefined, false));
    router.on([...allMethods], `${prefix}/watch/events`, (req, res) => events.collection(req, res, api, undefined, true));
    router.on([...allMethods], `${prefix}/namespaces/:namespace/events`, (req, res, p) =>
      events.collection(req, res, api, p.namespace, false),
    );
    router.on([...allMethods], `${prefix}/watch/namespaces/:namespace/events`, (req, res, p) =>
      events.collection(req, res, api, p.namespace, true),
    );
    router.on([...allMethods], `${prefix}/namespaces/:namespace/events/:name`, (req, res, p) =>
      events.item(req, res, api, p.namespace!, p.name!, false),
    );
    router.on([...allMethods], `${prefix}/watch/namespaces/:namespace/events/:name`, (req, res, p) =>
      events.item(req, res, api, p.namespace!, p.name!, true),
    );
  }

  // The archive's events (events.archive.kevents.io): the stored core/v1 Events, read-only, under a resource of the
  // archive's group, so that the cluster's RBAC and kubectl reach them through the aggregation layer apart from the
  // cluster's own events.
  const archiveEvents = `/apis/${ARCHIVE_API}`;
  const readOnly = (req: IncomingMessage, res: ServerResponse): void => sendError(res, newMethodNotAllowed(), logger, req.url ?? '');
  const writeMethods = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
  for (const [path, serve] of [
    [`${archiveEvents}/events`, (req, res) => events.collection(req, res, CORE_API, undefined, false)],
    [`${archiveEvents}/watch/events`, (req, res) => events.collection(req, res, CORE_API, undefined, true)],
    [`${archiveEvents}/namespaces/:namespace/events`, (req, res, p) => events.collection(req, res, CORE_API, p.namespace, false)],
    [`${archiveEvents}/watch/namespaces/:namespace/events`, (req, res, p) => events.collection(req, res, CORE_API, p.namespace, true)],
    [`${archiveEvents}/namespaces/:namespace/events/:name`, (req, res, p) => events.item(req, res, CORE_API, p.namespace!, p.name!, false)],
    [`${archiveEvents}/watch/namespaces/:namespace/events/:name`, (req, res, p) => events.item(req, res, CORE_API, p.namespace!, p.name!, true)],
  ] as [string, (req: IncomingMessage, res: ServerResponse, p: Record<string, string | undefined>) => void][]) {
    router.on('GET', path, serve);
    router.on([...writeMethods], path, readOnly);
  }

  const route = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      router.lookup(req, res);
    } catch (e) {
      sendError(res, e, logger, req.url ?? '');
    }
  };
  const refuse = (req: IncomingMessage, res: ServerResponse, refusal: StatusError): void => {
    // A client refused its credentials or its origin gets no kept-alive connection to hold.
    const code = refusal.status.code;
    if (code === 401 || code === 403) res.setHeader('Connection', 'close');
    // The request's body is not read: let it drain so a keep-alive connection stays usable.
    req.resume();
    sendError(res, refusal, logger, req.url ?? '');
  };
  const tls = options.tls !== undefined;
  const hosts: HostPolicy = { allowedHosts: options.allowedHosts ?? [] };
  /** guard is every check made before routing: the Host (without a gate), the target, the origin (of a write, and of an archive read) and the body's type. */
  const guard = (req: IncomingMessage): StatusError | undefined => {
    const host = gate === undefined ? checkHost(req, hosts) : undefined;
    if (host !== undefined) return host;
    try {
      requestTarget(req);
    } catch (e) {
      return e as StatusError;
    }
    return checkOrigin(req, tls) ?? checkArchiveRead(req, tls) ?? checkBodyType(req);
  };
  /** admitted routes a request let through, its connection counted as proven from now on. */
  const admitted = (req: IncomingMessage, res: ServerResponse): void => {
    connections.prove(req.socket);
    route(req, res);
  };
  /** overCap answers a request on a connection held in a health slot: a health check once, anything else 429. */
  const overCap = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!connections.health.holds(req.socket)) return false;
    res.setHeader('Connection', 'close');
    if (isHealthRequest(req)) return false;
    refuse(req, res, newTooManyRequests('too many connections open: this one may only ask for /healthz, /livez or /readyz', 1));
    return true;
  };
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    renewal?.track(req, res);
    // One comparison while no connection is held over the caps.
    if (connections.health.size > 0 && overCap(req, res)) return;
    const refusal = guard(req);
    if (refusal !== undefined) return refuse(req, res, refusal);
    if (gate === undefined) return admitted(req, res);
    const decision = gate.admit(req);
    if (decision === undefined) return admitted(req, res);
    if (!(decision instanceof Promise)) return refuse(req, res, decision);
    // The body waits in the request stream (nothing reads it yet) while a review is out.
    decision.then(
      (refusal) => (refusal === undefined ? admitted(req, res) : refuse(req, res, refusal)),
      (e: unknown) => refuse(req, res, newInternalError(e)),
    );
  };
  const limits = resolveLimits(options.limits);
  const serverOptions = { keepAliveTimeout: 65_000, ...serverOptionsOf(limits) };
  const httpServer = options.tls === undefined ? createHttpServer(serverOptions, handle) : createHttpsServer({ ...serverOptions, ...secureOptions(options.tls) }, handle);
  const connections = applyLimits(httpServer, limits, { authenticated: gate !== undefined });
  // Only a server that verifies client certificates has handshakes a new CA must renew.
  const renewal = options.tls?.clientCa !== undefined ? createHandshakeRenewal(httpServer) : undefined;
  let currentTls = options.tls;

  return {
    handle,
    metrics,
    httpServer,
    ui,
    setTls(next) {
      if (!('setSecureContext' in httpServer) || currentTls === undefined) throw new Error('setTls: this server was created without TLS');
      const caChanged = next.clientCa !== undefined && currentTls.clientCa !== undefined && !next.clientCa.equals(currentTls.clientCa);
      // A pair alone keeps the client CA in use.
      currentTls = { ...currentTls, ...next };
      httpServer.setSecureContext(secureContext(currentTls));
      if (caChanged) renewal?.renew();
    },
    async listen(host, port) {
      hosts.listenHost = host;
      await options.store.ready();
      await warm();
      await new Promise<void>((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, () => {
          httpServer.off('error', reject);
          resolve();
        });
      });
      ready = true;
      return httpServer.address() as AddressInfo;
    },
    async close() {
      ready = false;
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}
