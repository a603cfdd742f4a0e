import type { CoreEvent } from '../src/api/index.js';
import { archiveWrite } from '../src/mirror/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { isoSecondsAgo, legacyEvent, microSecondsAgo } from './support/http.js';

/** SEARCH_SPAN_S is how far back the seeded archive's events go: within the last hour (the search view's default window), with room for a slow run. */
export const SEARCH_SPAN_S = 2400;

/** CHECKOUT_HITS is how many seeded events mention checkout-db: more than two pages of the search view. */
export const CHECKOUT_HITS = 120;

const BATCH = 2000;
const NODES = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e'];
const NAMESPACES = ['shop', 'batch', 'payments', 'search', 'kube-system'];

/** SeededHit is one checkout-db event as written: its name and when it last happened (seconds ago). */
export interface SeededHit {
  name: string;
  namespace: string;
  object: string;
  lastAgo: number;
}

/**
 * seedSearchArchive writes `total` events into an SQLite archive through the
 * mirror's own write, in batches: kubelet, scheduler and controller messages
 * over many pods, nodes and images, spread over the last SEARCH_SPAN_S seconds.
 * CHECKOUT_HITS of them are about the StatefulSet checkout-db (failing volume
 * mounts); one of those has a message that would run script if rendered as HTML.
 * It answers the checkout-db events newest first, as the search orders them.
 */
export async function seedSearchArchive(path: string, total: number): Promise<SeededHit[]> {
  const store = new SqliteEventStore({ path });
  await store.ready();
  const hits: SeededHit[] = [];
  const every = Math.floor(total / CHECKOUT_HITS);
  // Times are taken back from one instant, however long the writing takes.
  const now = Date.now();
  try {
    let rv = 0;
    for (let start = 0; start < total; start += BATCH) {
      const writes = [];
      for (let i = start; i < Math.min(total, start + BATCH); i++) {
        let lastAgo = 1 + ((i * 7919) % SEARCH_SPAN_S);
        const node = NODES[i % NODES.length]!;
        const ns = NAMESPACES[i % NAMESPACES.length]!;
        const pod = `app-${(i % 997).toString(36)}-${(i % 89).toString(36)}x${(i % 13).toString(36)}`;
        let o: Parameters<typeof legacyEvent>[0];
        if (i % every === 0 && hits.length < CHECKOUT_HITS) {
          // Whole seconds apart (event times are kept to the second), so that the search's order is their order.
          lastAgo = 1 + ((hits.length * 7) % CHECKOUT_HITS) * Math.floor(SEARCH_SPAN_S / CHECKOUT_HITS);
          const object = `checkout-db-${hits.length % 3}`;
          const message = hits.length === 7
            ? '<img src=x onerror=alert(1)> MountVolume.SetUp failed for volume "data" of checkout-db'
            : `MountVolume.SetUp failed for volume "pvc-${i.toString(16)}" : rpc error: code = DeadlineExceeded desc = checkout-db volume not attached to ${node}`;
          o = { name: `${object}.${i.toString(16)}`, namespace: 'shop', object, reason: 'FailedMount', type: 'Warning', host: node, message, firstAgo: lastAgo, lastAgo };
          hits.push({ name: o.name, namespace: 'shop', object, lastAgo });
        } else {
          switch (i % 4) {
            case 0:
              o = { name: `${pod}.${i.toString(16)}`, namespace: ns, object: pod, reason: 'Pulled', host: node,
                message: `Successfully pulled image "registry.example.com/${ns}/${pod.slice(0, 6)}:1.${i % 40}.${i % 7}" in ${(i % 900) / 100}s`, firstAgo: lastAgo, lastAgo };
              break;
            case 1:
              o = { name: `${pod}.${i.toString(16)}`, namespace: ns, object: pod, reason: 'Scheduled', component: 'default-scheduler',
                message: `Successfully assigned ${ns}/${pod} to ${node}`, firstAgo: lastAgo, lastAgo };
              break;
            case 2:
              o = { name: `${pod}.${i.toString(16)}`, namespace: ns, object: pod, reason: 'BackOff', type: 'Warning', host: node,
                message: `Back-off restarting failed container main in pod ${pod}_${ns}(${i.toString(16)})`, firstAgo: lastAgo, lastAgo };
              break;
            default:
              o = { name: `${pod}-rs.${i.toString(16)}`, namespace: ns, kind: 'ReplicaSet', object: `${pod}-rs`, reason: 'SuccessfulCreate', component: 'replicaset-controller',
                message: `Created pod: ${pod}`, firstAgo: lastAgo, lastAgo };
          }
        }
        const e = legacyEvent(o) as unknown as CoreEvent;
        e.firstTimestamp = e.lastTimestamp = isoSecondsAgo(lastAgo, now);
        e.metadata = { ...e.metadata, uid: `uid-${i}`, creationTimestamp: e.firstTimestamp, resourceVersion: String(++rv) };
        writes.push(archiveWrite(e));
      }
      await store.applyArchiveBatch({ writes, stamp: { observedTime: microSecondsAgo(0) } });
    }
  } finally {
    await store.close();
  }
  return hits.sort((a, b) => a.lastAgo - b.lastAgo);
}
