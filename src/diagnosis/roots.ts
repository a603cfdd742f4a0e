import type { CoreEvent } from '../api/index.js';
import { eventCluster, OWNER_KINDS as OWNER_KIND_NAMES } from '../api/index.js';
import { scopeObjects } from '../timeline/index.js';
import type { OwnerLink } from '../timeline/index.js';

/**
 * Roots: the highest owner an object's events or names reach (Deployment →
 * ReplicaSet → Pod, StatefulSet, DaemonSet, Job, CronJob → Job), found with the
 * timeline's own scoping, so an incident's root and the timeline it opens agree.
 */

/** OWNER_KINDS are the kinds that own pods or jobs (api's table): their events (any reason) are what roots are worked out from. */
const OWNER_KINDS = new Set(OWNER_KIND_NAMES);

/** Roots answers the root of an object. */
export interface Roots {
  /** rootOf is the `Kind/name` of the highest owner of `object` (`Kind/name`) in a cluster's namespace, else the object. */
  rootOf(cluster: string, namespace: string, object: string): string;
}

function nsKey(cluster: string, namespace: string): string {
  return `${cluster}\u0000${namespace}`;
}

/**
 * findRoots works out ownership in the namespaces of `failures` from every
 * event read there (`events`) and the recorded owner references: each owner's
 * scope is what the timeline shows for it; an object's parent is the owner
 * with the widest scope that holds it.
 */
export function findRoots(events: readonly CoreEvent[], failures: readonly CoreEvent[], owners: readonly OwnerLink[]): Roots {
  const wanted = new Set(failures.map((e) => nsKey(eventCluster(e), e.involvedObject.namespace ?? e.metadata.namespace ?? '')));
  const byNamespace = new Map<string, CoreEvent[]>();
  for (const e of events) {
    const key = nsKey(eventCluster(e), e.involvedObject.namespace ?? e.metadata.namespace ?? '');
    if (!wanted.has(key)) continue;
    const list = byNamespace.get(key);
    if (list === undefined) byNamespace.set(key, [e]);
    else list.push(e);
  }
  const parents = new Map<string, Map<string, string>>();
  for (const [key, nsEvents] of byNamespace) {
    const namespace = key.slice(key.indexOf('\u0000') + 1);
    const nsOwners = owners.filter((l) => l.namespace === namespace);
    const candidates = new Set<string>();
    for (const e of nsEvents) if (OWNER_KINDS.has(e.involvedObject.kind ?? '')) candidates.add(`${e.involvedObject.kind}/${e.involvedObject.name ?? ''}`);
    for (const l of nsOwners) candidates.add(`${l.owner.kind}/${l.owner.name}`);
    const widest = new Map<string, { owner: string; size: number }>();
    for (const c of [...candidates].sort()) {
      const slash = c.indexOf('/');
      const scope = scopeObjects({ kind: c.slice(0, slash), name: c.slice(slash + 1), namespace }, nsEvents, nsOwners);
      for (const o of scope.objects) {
        if (o === c) continue;
        const had = widest.get(o);
        if (had === undefined || scope.objects.length > had.size) widest.set(o, { owner: c, size: scope.objects.length });
      }
    }
    parents.set(key, new Map([...widest].map(([o, w]) => [o, w.owner])));
  }
  return {
    rootOf(cluster, namespace, object) {
      const parent = parents.get(nsKey(cluster, namespace));
      let root = object;
      const seen = new Set([root]);
      for (let up = parent?.get(root); up !== undefined && !seen.has(up); up = parent?.get(root)) {
        seen.add(up);
        root = up;
      }
      return root;
    },
  };
}
