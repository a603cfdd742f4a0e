import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_ANSWER_BYTES } from '../api/index.js';
import { noopLogger, realClock } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { EventStore } from '../storage/index.js';
import { registerArchiveRoutes } from './archive/archive-routes.js';
import { registerIncidentRoutes } from './archive/incident-routes.js';
import type { IncidentReader } from './archive/incident-routes.js';
import { registerSearchRoutes } from './archive/search-routes.js';
import { registerTimelineRoutes } from './archive/timeline-routes.js';
import type { TimelineReader } from './archive/timeline-routes.js';
import { registerDocuments } from './discovery/documents.js';
import { registerKnownKinds } from './discovery/known-kinds.js';
import { createRequestHandler } from './http/admission.js';
import type { RequestGate } from './http/admission.js';
import { applyLimits, resolveLimits, serverOptionsOf } from './http/connection-limits.js';
import type { ConnectionLimits } from './http/connection-limits.js';
import { createHandshakeRenewal } from './http/handshake-renewal.js';
import { registerHealthRoutes } from './http/health-routes.js';
import type { ReadinessCheck } from './http/health-routes.js';
import { createServerMetrics } from './http/metrics.js';
import type { ServerMetrics } from './http/metrics.js';
import type { HostPolicy } from './http/request-guard.js';
import { createRouter } from './http/router.js';
import { registerUiAssets } from './http/ui-assets.js';
import { DEFAULT_RENDER_CACHE_WARM_MS, warmRenderCache } from './render/render-warm.js';
import { registerEventRoutes } from './rest/event-routes.js';
import { EventsHandler } from './rest/events-handler.js';
import { EventRegistry } from './rest/registry.js';

export type { ReadinessCheck } from './http/health-routes.js';
export type { RequestGate } from './http/admission.js';

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
  const gate = options.gate;
  const registry = new EventRegistry({ store: options.store, eventTtlSeconds: options.eventTtlSeconds ?? DEFAULT_EVENT_TTL_SECONDS, clock });
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

  let ready = false;
  const router = createRouter(logger);
  registerHealthRoutes(router, { ready: () => ready, readinessChecks: options.readinessChecks, metrics, metricsText: options.metricsText, logger });
  const maxAnswerBytes = options.maxAnswerBytes !== undefined && options.maxAnswerBytes > 0 ? options.maxAnswerBytes : DEFAULT_MAX_ANSWER_BYTES;
  registerArchiveRoutes(router, { store: options.store, clock, logger, metrics, maxAnswerBytes });
  registerTimelineRoutes(router, { timeline: options.timeline, logger, metrics, maxAnswerBytes });
  registerSearchRoutes(router, { store: options.store, clock, logger, metrics, maxAnswerBytes });
  registerIncidentRoutes(router, { incidents: options.incidents, clock, logger, metrics, maxAnswerBytes });
  registerDocuments(router, { logger, keventsVersion: options.keventsVersion ?? '0.0.0' });
  registerKnownKinds(router, { store: options.store, logger });
  const ui = registerUiAssets(router, { logger });
  registerEventRoutes(router, { events, logger });

  const hosts: HostPolicy = { allowedHosts: options.allowedHosts ?? [] };
  const handle = createRequestHandler({ router, gate, tls: options.tls !== undefined, hosts, logger, connections: () => connections, renewal: () => renewal });
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
      await warmRenderCache((ms) => events.warm(ms), options.renderCacheWarmMs ?? DEFAULT_RENDER_CACHE_WARM_MS, logger);
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
