// The way of every request from the socket to its route: the connection caps' health slots, the guards (Host,
// target, origin, body type), the gate (authentication and authorization, where there is one), then the router, with
// one answer for a refusal and one for anything a route throws.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { newInternalError, newTooManyRequests } from '../../api/index.js';
import type { StatusError } from '../../api/index.js';
import { requestTarget } from '../../auth/index.js';
import type { Logger } from '../../internal/index.js';
import type { ConnectionGate } from './connection-limits.js';
import type { HandshakeRenewal } from './handshake-renewal.js';
import { isHealthRequest } from './health-slots.js';
import { sendError } from './http-io.js';
import { checkArchiveRead, checkBodyType, checkHost, checkOrigin } from './request-guard.js';
import type { HostPolicy } from './request-guard.js';

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

/** AdmissionOptions are what the request handler checks a request against, and where it routes one let through. */
export interface AdmissionOptions {
  router: Router<HTTPVersion.V1>;
  gate: RequestGate | undefined;
  /** tls says whether the server is HTTPS, which the origin checks read. */
  tls: boolean;
  hosts: HostPolicy;
  logger: Logger;
  /** connections and renewal belong to the HTTP server, which is made with this handler: read at each request. */
  connections: () => ConnectionGate;
  renewal: () => HandshakeRenewal | undefined;
}

/** createRequestHandler returns the server's request listener. */
export function createRequestHandler(o: AdmissionOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { gate, logger, router } = o;
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
  /** guard is every check made before routing: the Host (without a gate), the target, the origin (of a write, and of an archive read) and the body's type. */
  const guard = (req: IncomingMessage): StatusError | undefined => {
    const host = gate === undefined ? checkHost(req, o.hosts) : undefined;
    if (host !== undefined) return host;
    try {
      requestTarget(req);
    } catch (e) {
      return e as StatusError;
    }
    return checkOrigin(req, o.tls) ?? checkArchiveRead(req, o.tls) ?? checkBodyType(req);
  };
  /** admitted routes a request let through, its connection counted as proven from now on. */
  const admitted = (req: IncomingMessage, res: ServerResponse): void => {
    o.connections().prove(req.socket);
    route(req, res);
  };
  /** overCap answers a request on a connection held in a health slot: a health check once, anything else 429. */
  const overCap = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!o.connections().health.holds(req.socket)) return false;
    res.setHeader('Connection', 'close');
    if (isHealthRequest(req)) return false;
    refuse(req, res, newTooManyRequests('too many connections open: this one may only ask for /healthz, /livez or /readyz', 1));
    return true;
  };
  return (req, res) => {
    o.renewal()?.track(req, res);
    // One comparison while no connection is held over the caps.
    if (o.connections().health.size > 0 && overCap(req, res)) return;
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
}
