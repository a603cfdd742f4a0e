import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { newNotAcceptable, newPathNotFound } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  discoveryContentType,
  discoveryETag,
  negotiateDiscovery,
} from './discovery.js';
import { sendError, sendJsonText } from '../http/http-io.js';
import { openApiV3Index, openApiV3Spec } from './openapi.js';
import { OPENAPI_V2_PROTOBUF_CONTENT_TYPE, openApiV2Protobuf } from './openapi-v2.js';
import { versionInfo } from './version-info.js';

/**
 * registerDocuments serves the static API documents: /version, discovery (legacy
 * and aggregated) and OpenAPI, which kubectl and the official clients read before
 * they touch events.
 */
export function registerDocuments(router: Router<HTTPVersion.V1>, deps: { logger: Logger; keventsVersion: string }): void {
  const version = JSON.stringify(
    versionInfo({ keventsVersion: deps.keventsVersion, runtime: `node-${process.version}` }),
  );
  const guard = (fn: (req: IncomingMessage, res: ServerResponse, p: Record<string, string | undefined>) => void) =>
    (req: IncomingMessage, res: ServerResponse, p: Record<string, string | undefined>): void => {
      try {
        fn(req, res, p);
      } catch (e) {
        sendError(res, e, deps.logger, req.url ?? '');
      }
    };

  router.on('GET', '/version', guard((_req, res) => sendJsonText(res, 200, version)));

  const discoveryRoot = (root: 'api' | 'apis') =>
    guard((req, res) => {
      const format = negotiateDiscovery(req.headers.accept);
      if (format !== 'legacy') {
        const doc = aggregatedDiscovery(root, format);
        const etag = discoveryETag(doc);
        res.setHeader('ETag', etag);
        res.setHeader('Vary', 'Accept');
        if (req.headers['if-none-match'] === etag) {
          res.writeHead(304);
          res.end();
          return;
        }
        sendJsonText(res, 200, JSON.stringify(doc), discoveryContentType(format));
        return;
      }
      res.setHeader('Vary', 'Accept');
      const body = root === 'api' ? apiVersions({ serverAddress: req.headers.host ?? '127.0.0.1' }) : apiGroupList();
      sendJsonText(res, 200, JSON.stringify(body));
    });
  router.on('GET', '/api', discoveryRoot('api'));
  router.on('GET', '/apis', discoveryRoot('apis'));
  router.on('GET', '/api/v1', guard((_req, res) => sendJsonText(res, 200, JSON.stringify(apiResourceList({ group: '', version: 'v1' })))));
  router.on('GET', '/apis/:group', guard((_req, res, p) => {
    const doc = apiGroup(p.group ?? '');
    if (doc === undefined) throw newPathNotFound();
    sendJsonText(res, 200, JSON.stringify(doc));
  }));
  router.on('GET', '/apis/:group/:version', guard((_req, res, p) => {
    const doc = apiResourceList({ group: p.group ?? '', version: p.version ?? '' });
    if (doc === undefined) throw newPathNotFound();
    sendJsonText(res, 200, JSON.stringify(doc));
  }));

  router.on('GET', '/openapi/v3', guard((_req, res) => sendJsonText(res, 200, JSON.stringify(openApiV3Index()))));
  router.on('GET', '/openapi/v3/*', guard((req, res, p) => {
    const spec = openApiV3Spec(p['*'] ?? '');
    if (spec === undefined) throw newPathNotFound();
    const url = new URL(req.url ?? '/', 'http://x');
    // A request that names the current hash may be cached for good, as upstream allows.
    res.setHeader('Cache-Control', url.searchParams.get('hash') === spec.hash ? 'public, immutable' : 'no-cache, private');
    res.setHeader('Etag', JSON.stringify(spec.hash));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(spec.json) });
    res.end(spec.json);
  }));
  router.on('GET', '/openapi/v2', guard((req, res) => {
    const accept = req.headers.accept ?? '';
    if (!accept.includes('protobuf')) throw newNotAcceptable([OPENAPI_V2_PROTOBUF_CONTENT_TYPE]);
    const body = openApiV2Protobuf();
    res.writeHead(200, { 'Content-Type': OPENAPI_V2_PROTOBUF_CONTENT_TYPE, 'Content-Length': body.length });
    res.end(body);
  }));
}
