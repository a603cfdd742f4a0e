/** HttpResult is a parsed answer of the server. */
export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** request sends one request to a kevents server and parses the JSON answer, if any; `signal` can give it a timeout. */
export async function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<HttpResult> {
  const init: RequestInit = { method, headers: { ...headers }, ...(signal === undefined ? {} : { signal }) };
  if (body !== undefined) {
    init.body = typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let json: any;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** isoSecondsAgo is an RFC 3339 time (second precision) the given number of seconds before now. */
export function isoSecondsAgo(seconds: number, now = Date.now()): string {
  return new Date(Math.floor(now / 1000) * 1000 - seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** microSecondsAgo is a MicroTime (six fractional digits) the given number of seconds before now. */
export function microSecondsAgo(seconds: number, now = Date.now()): string {
  return new Date(Math.floor(now / 1000) * 1000 - seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '.000000Z');
}

/** legacyEvent builds a core/v1 event as client-go's tools/record writes it. */
export function legacyEvent(o: {
  name: string;
  namespace?: string;
  kind?: string;
  object: string;
  reason: string;
  message: string;
  type?: string;
  count?: number;
  firstAgo: number;
  lastAgo: number;
  component?: string;
  host?: string;
  uid?: string;
  fieldPath?: string;
}): Record<string, unknown> {
  const ns = o.namespace ?? 'default';
  const kind = o.kind ?? 'Pod';
  const involvedObject: Record<string, unknown> = {
    kind,
    namespace: ns,
    name: o.object,
    apiVersion: kind === 'Deployment' || kind === 'ReplicaSet' ? 'apps/v1' : 'v1',
  };
  if (o.uid !== undefined) involvedObject.uid = o.uid;
  if (o.fieldPath !== undefined) involvedObject.fieldPath = o.fieldPath;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: o.name, namespace: ns },
    involvedObject,
    reason: o.reason,
    message: o.message,
    source: { component: o.component ?? 'kubelet', ...(o.host !== undefined ? { host: o.host } : {}) },
    firstTimestamp: isoSecondsAgo(o.firstAgo),
    lastTimestamp: isoSecondsAgo(o.lastAgo),
    count: o.count ?? 1,
    type: o.type ?? 'Normal',
    reportingComponent: o.component ?? 'kubelet',
    reportingInstance: o.host ?? '',
  };
}

/** newApiEvent builds an events.k8s.io/v1 event as client-go's tools/events writes it. */
export function newApiEvent(o: {
  name: string;
  namespace?: string;
  kind?: string;
  object: string;
  reason: string;
  action: string;
  note: string;
  type?: string;
  eventAgo: number;
  controller?: string;
  series?: { count: number; lastAgo: number };
}): Record<string, unknown> {
  const ns = o.namespace ?? 'default';
  const controller = o.controller ?? 'default-scheduler';
  const ev: Record<string, unknown> = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: o.name, namespace: ns },
    eventTime: microSecondsAgo(o.eventAgo),
    reportingController: controller,
    reportingInstance: `${controller}-node-1`,
    action: o.action,
    reason: o.reason,
    regarding: { kind: o.kind ?? 'Pod', namespace: ns, name: o.object, apiVersion: 'v1' },
    note: o.note,
    type: o.type ?? 'Normal',
  };
  if (o.series !== undefined) ev.series = { count: o.series.count, lastObservedTime: microSecondsAgo(o.series.lastAgo) };
  return ev;
}

/**
 * createBackOffs creates one BackOff event (`legacyEvent`) per name in `path`, 25 at a time, each
 * about `web-<name>`, and fails on any answer but 201.
 */
export async function createBackOffs(url: string, path: string, names: readonly string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(
      names.slice(i, i + 25).map(async (name) => {
        const r = await request(url, 'POST', path, legacyEvent({ name, object: `web-${name}`, reason: 'BackOff', message: `m ${name}`, firstAgo: 60, lastAgo: 1 }));
        if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
      }),
    );
  }
}
