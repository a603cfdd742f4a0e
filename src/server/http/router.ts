// The router every route is added to, and what answers a path none of them has.
import type FindMyWayModule from 'find-my-way';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { newPathNotFound } from '../../api/index.js';
import { requireCjs } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import { apiGroup } from '../discovery/discovery.js';
import { sendError, sendPlainNotFound } from './http-io.js';

const FindMyWay = requireCjs('find-my-way') as typeof FindMyWayModule;

/** createRouter makes the server's router: a 404 Status for a path it has no route for, as kube-apiserver answers. */
export function createRouter(logger: Logger): Router<HTTPVersion.V1> {
  return FindMyWay({
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
}
