import { newBadRequest } from '../../../api/index.js';
import type { Timeline } from '../../../api/index.js';
import type { TimelineQuery, TimelineReader } from '../../../server/index.js';
import type { EventStore } from '../../../storage/index.js';
import { collectTimeline, ForParseError, isNamespacedKind, parseForArgument, storeTimelineSource } from '../../../timeline/index.js';
import type { ObjectRef } from '../../../timeline/index.js';
import { explainTimeline } from '../../../diagnosis/index.js';

/**
 * storeTimelineReader is the server's timeline (what the web UI draws) built by
 * src/timeline straight from the server's store: the same rows, summary and
 * next steps as `kevents timeline` prints against that server.
 */
export function storeTimelineReader(store: EventStore): TimelineReader {
  return async (q: TimelineQuery): Promise<Timeline> => {
    let root: ObjectRef | undefined;
    if (q.for !== undefined) {
      try {
        root = parseForArgument(q.for, { allowUnknown: true });
      } catch (e) {
        if (e instanceof ForParseError) throw newBadRequest(`for: ${e.message}`);
        throw e;
      }
      if (isNamespacedKind(root.kind)) {
        if (q.namespace === undefined) throw newBadRequest(`for: ${q.for} names an object of one namespace: ask for it under /namespaces/{namespace}/timeline`);
        root.namespace = q.namespace;
      } else if (q.namespace !== undefined) {
        // A namespaced route reads its namespace alone: a Node's events live in another one.
        throw newBadRequest(`for: ${q.for} is not in a namespace: ask for it at /apis/archive.kevents.io/v1alpha1/timeline`);
      }
    }
    return collectTimeline({
      source: storeTimelineSource(store, { clusters: q.clusters }),
      for: root,
      namespace: q.namespace,
      since: q.since,
      until: q.until,
      types: q.types,
      namespaceOnly: q.namespace !== undefined,
      explain: explainTimeline,
    });
  };
}
