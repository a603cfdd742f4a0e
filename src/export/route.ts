import type { ExportFields } from './fields.js';
import type { ConfigReader } from './config-reader.js';

/**
 * Routes decide which sinks receive a change, as a tree: a route whose `drop`
 * rules match a change stops there (for itself and the routes under it); a
 * route with `match` rules goes on only when one of them matches; the change
 * then goes to the route's `sinks` and on to each of its `routes`. A sink
 * receives a change at most once, with the `topic` of the deepest matching
 * route that names it (a route inherits its parent's topic).
 */

/** Rule is one match or drop rule: every condition it has must hold. */
export interface Rule {
  test(f: ExportFields): boolean;
}

/** Route is one node of the route tree. */
export interface Route {
  match: Rule[];
  drop: Rule[];
  sinks: string[];
  topic?: string;
  routes: Route[];
}

/** RULE_FIELDS are the conditions a rule may hold. */
export const RULE_FIELDS = ['namespace', 'kind', 'name', 'reason', 'type', 'reportingController', 'cluster', 'message', 'labels', 'minCount', 'maxCount'] as const;

const TEXT_FIELDS: Record<string, (f: ExportFields) => string> = {
  namespace: (f) => f.namespace,
  kind: (f) => f.regarding.kind,
  name: (f) => f.regarding.name,
  reason: (f) => f.reason,
  type: (f) => f.type,
  reportingController: (f) => f.reportingController,
  cluster: (f) => f.cluster,
  message: (f) => f.message,
};

/** readRule reads a rule: text conditions are anchored regular expressions, `labels` label values, counts bounds on the count. */
export function readRule(r: ConfigReader, path: (string | number)[], raw: unknown): Rule | undefined {
  const o = r.object(path, raw, RULE_FIELDS, true);
  if (o === undefined) return undefined;
  const tests: ((f: ExportFields) => boolean)[] = [];
  for (const [field, read] of Object.entries(TEXT_FIELDS)) {
    if (o[field] === undefined) continue;
    const re = r.regex([...path, field], o[field]);
    if (re !== undefined) tests.push((f) => re.test(read(f)));
  }
  const labels = r.stringMap([...path, 'labels'], o.labels);
  if (labels !== undefined) {
    const compiled = Object.entries(labels).map(([k, v]) => [k, r.regex([...path, 'labels', k], v)] as const);
    tests.push((f) => compiled.every(([k, re]) => re !== undefined && f.labels[k] !== undefined && re.test(f.labels[k])));
  }
  const min = r.integer([...path, 'minCount'], o.minCount, { min: 0 });
  if (min !== undefined) tests.push((f) => f.count >= min);
  const max = r.integer([...path, 'maxCount'], o.maxCount, { min: 0 });
  if (max !== undefined) tests.push((f) => f.count <= max);
  if (Object.keys(o).length === 0) r.fail(path, 'a rule needs at least one condition');
  return { test: (f) => tests.every((t) => t(f)) };
}

/** readRoute reads a route and the routes under it; every sink it names must be configured. */
export function readRoute(r: ConfigReader, path: (string | number)[], raw: unknown, sinkNames: ReadonlySet<string>): Route {
  const o = r.object(path, raw, ['match', 'drop', 'sinks', 'topic', 'routes']) ?? {};
  const rules = (key: string): Rule[] =>
    r.list([...path, key], o[key]).flatMap((v, i) => {
      const rule = readRule(r, [...path, key, i], v);
      return rule === undefined ? [] : [rule];
    });
  const sinks = r.list([...path, 'sinks'], o.sinks).flatMap((v, i) => {
    const name = r.string([...path, 'sinks', i], v, { required: true });
    if (name === undefined) return [];
    if (!sinkNames.has(name)) {
      r.fail([...path, 'sinks', i], `no sink is named ${JSON.stringify(name)}`);
      return [];
    }
    return [name];
  });
  const route: Route = {
    match: rules('match'),
    drop: rules('drop'),
    sinks,
    routes: r.list([...path, 'routes'], o.routes).map((v, i) => readRoute(r, [...path, 'routes', i], v, sinkNames)),
  };
  const topic = r.string([...path, 'topic'], o.topic);
  if (topic !== undefined) route.topic = topic;
  return route;
}

/** routeTargets lists the sinks a change goes to, each with the topic its route gave it. */
export function routeTargets(route: Route, f: ExportFields, out = new Map<string, string | undefined>(), topic?: string): Map<string, string | undefined> {
  if (route.drop.some((rule) => rule.test(f))) return out;
  if (route.match.length > 0 && !route.match.some((rule) => rule.test(f))) return out;
  const t = route.topic ?? topic;
  // The deepest matching route that names a sink gives it its topic: nested routes go first.
  for (const child of route.routes) routeTargets(child, f, out, t);
  for (const s of route.sinks) if (!out.has(s)) out.set(s, t);
  return out;
}
