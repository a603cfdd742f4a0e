import type { CoreEvent } from '../api/index.js';
import type { ObjectRef } from './kinds.js';
import { isNamespacedKind } from './kinds.js';

/**
 * Object scope: the objects whose events tell the story of one object. A
 * Deployment brings its ReplicaSets and their Pods; a Pod brings the Node it was
 * scheduled to. Events of deleted objects are as good as any: nothing here asks
 * whether an object still exists.
 */

/** OwnerLink is a recorded owner reference: `child` is controlled by `owner` (same namespace). */
export interface OwnerLink {
  namespace: string;
  child: { kind: string; name: string };
  owner: { kind: string; name: string };
}

/** ObjectScope is the result of scoping: the objects in scope and the nodes their pods ran on. */
export interface ObjectScope {
  root: ObjectRef;
  /** objects are `Kind/name` keys of namespaced objects in the root's namespace, root first. */
  objects: string[];
  /** nodes are the names of the nodes the pods in scope were assigned to. */
  nodes: string[];
  /** how says, per object, why it is in scope: `root`, `owner reference`, `event message` or `name`. */
  how: Record<string, 'root' | 'owner reference' | 'event message' | 'name'>;
}

/** POD_TEMPLATE_HASH is a Deployment's pod-template-hash: safe-encoded (no vowels, no 0 1 3), or decimal in old releases. */
const POD_TEMPLATE_HASH = '(?:[bcdfghjklmnpqrstvwxz2456789]{5,10}|[0-9]{5,10})';
/** GENERATED_SUFFIX is the 5-character suffix of a generateName (`web-7d4b9c8f5-x2x7k`). */
const GENERATED_SUFFIX = '[bcdfghjklmnpqrstvwxz2456789]{5}';

interface ChildRule {
  kind: string;
  /** byName matches a child's name given the owner's name, by Kubernetes' naming conventions. */
  byName: (owner: string) => RegExp;
  /** byMessage extracts child names from an event of the owner (its controller's messages). */
  byMessage: RegExp;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const CHILD_RULES: Readonly<Record<string, ChildRule>> = {
  // "Scaled up replica set web-7d4b9c8f5 to 3" (and "… from 1 to 3" since 1.30).
  Deployment: { kind: 'ReplicaSet', byName: (o) => new RegExp(`^${escapeRegExp(o)}-${POD_TEMPLATE_HASH}$`), byMessage: /replica set (\S+?) (?:from|to) /g },
  ReplicaSet: { kind: 'Pod', byName: (o) => new RegExp(`^${escapeRegExp(o)}-${GENERATED_SUFFIX}$`), byMessage: /(?:Created|Deleted) pod: (\S+)/g },
  ReplicationController: { kind: 'Pod', byName: (o) => new RegExp(`^${escapeRegExp(o)}-${GENERATED_SUFFIX}$`), byMessage: /(?:Created|Deleted) pod: (\S+)/g },
  DaemonSet: { kind: 'Pod', byName: (o) => new RegExp(`^${escapeRegExp(o)}-${GENERATED_SUFFIX}$`), byMessage: /(?:Created|Deleted) pod: (\S+)/g },
  Job: { kind: 'Pod', byName: (o) => new RegExp(`^${escapeRegExp(o)}-${GENERATED_SUFFIX}$`), byMessage: /(?:Created|Deleted) pod: (\S+)/g },
  // "create Pod web-0 in StatefulSet web successful"
  StatefulSet: { kind: 'Pod', byName: (o) => new RegExp(`^${escapeRegExp(o)}-\\d+$`), byMessage: /(?:create|delete) Pod (\S+) in StatefulSet /g },
  // "Created job nightly-28391234"
  CronJob: { kind: 'Job', byName: (o) => new RegExp(`^${escapeRegExp(o)}-\\d+$`), byMessage: /(?:Created|Saw completed) job:? (\S+?),?(?: |$)/g },
};

/** SCHEDULED_MESSAGE is the scheduler's bind message: `Successfully assigned <ns>/<pod> to <node>`. */
const SCHEDULED_MESSAGE = /^Successfully assigned (\S+)\/(\S+) to (\S+)$/;

/** objectKey is the `Kind/name` key of an event's involved object. */
export function objectKey(e: CoreEvent): string {
  return `${e.involvedObject.kind ?? ''}/${e.involvedObject.name ?? ''}`;
}

/** SCHEDULED_REASON is the reason of the scheduler's bind event, which names a pod's node. */
export const SCHEDULED_REASON = 'Scheduled';

/** scheduledNode returns the node of a Scheduled event's message, if it is one. */
export function scheduledNode(e: CoreEvent): string | undefined {
  if (e.reason !== SCHEDULED_REASON) return undefined;
  return SCHEDULED_MESSAGE.exec((e.message ?? '').trim())?.[3];
}

/**
 * scopeObjects follows ownership down from `root` over the events of its
 * namespace: recorded owner references first; where an owner has none, the
 * names its controller's events mention and Kubernetes' naming conventions.
 */
export function scopeObjects(root: ObjectRef, events: readonly CoreEvent[], owners: readonly OwnerLink[] = []): ObjectScope {
  const namespace = root.namespace ?? '';
  const inNamespace = events.filter((e) => isNamespacedKind(e.involvedObject.kind ?? '') && (e.involvedObject.namespace ?? e.metadata.namespace ?? '') === namespace);
  const names = new Map<string, Set<string>>();
  const byObject = new Map<string, CoreEvent[]>();
  for (const e of inNamespace) {
    const kind = e.involvedObject.kind ?? '';
    const name = e.involvedObject.name ?? '';
    let set = names.get(kind);
    if (set === undefined) names.set(kind, (set = new Set()));
    set.add(name);
    const key = `${kind}/${name}`;
    const list = byObject.get(key);
    if (list === undefined) byObject.set(key, [e]);
    else list.push(e);
  }
  const ownedBy = new Map<string, string[]>();
  for (const l of owners) {
    if (l.namespace !== namespace) continue;
    const key = `${l.owner.kind}/${l.owner.name}`;
    const list = ownedBy.get(key) ?? [];
    list.push(`${l.child.kind}/${l.child.name}`);
    ownedBy.set(key, list);
  }

  const rootKey = `${root.kind}/${root.name}`;
  const how: ObjectScope['how'] = { [rootKey]: 'root' };
  const objects = [rootKey];
  const queue = [rootKey];
  const add = (key: string, why: ObjectScope['how'][string]): void => {
    if (how[key] !== undefined) return;
    how[key] = why;
    objects.push(key);
    queue.push(key);
  };
  while (queue.length > 0) {
    const key = queue.shift()!;
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const recorded = ownedBy.get(key);
    if (recorded !== undefined) {
      for (const child of recorded) add(child, 'owner reference');
      continue;
    }
    const rule = CHILD_RULES[kind];
    if (rule === undefined) continue;
    for (const e of byObject.get(key) ?? []) {
      for (const m of (e.message ?? '').matchAll(rule.byMessage)) if (m[1]) add(`${rule.kind}/${m[1]}`, 'event message');
    }
    const re = rule.byName(name);
    for (const candidate of names.get(rule.kind) ?? []) if (re.test(candidate)) add(`${rule.kind}/${candidate}`, 'name');
  }

  const nodes: string[] = [];
  for (const key of objects) {
    if (!key.startsWith('Pod/')) continue;
    for (const e of byObject.get(key) ?? []) {
      const node = scheduledNode(e);
      if (node !== undefined && !nodes.includes(node)) nodes.push(node);
    }
  }
  return { root, objects, nodes, how };
}

/**
 * inScope tells whether an event belongs to a scope: an object of the scope in
 * the root's namespace, or one of the scope's nodes.
 */
export function inScope(scope: ObjectScope, e: CoreEvent): boolean {
  const kind = e.involvedObject.kind ?? '';
  const name = e.involvedObject.name ?? '';
  if (kind === 'Node') return scope.nodes.includes(name) || (scope.root.kind === 'Node' && scope.root.name === name);
  if (!isNamespacedKind(kind)) return scope.root.kind === kind && scope.root.name === name;
  const ns = e.involvedObject.namespace ?? e.metadata.namespace ?? '';
  return ns === (scope.root.namespace ?? '') && scope.how[`${kind}/${name}`] !== undefined;
}
