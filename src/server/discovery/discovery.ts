/**
 * Discovery documents: the legacy ones (`/api`, `/apis`, `/api/v1`, `/apis/<g>/<v>`) and
 * aggregated discovery (`apidiscovery.k8s.io` v2 and v2beta1), built from one table of the
 * kinds kevents serves. Pure data; the server sends these as they are.
 */
import { createHash } from 'node:crypto';
import { builtinKind } from '../../api/index.js';

/** KnownKind is one resource kevents lists in discovery. */
export interface KnownKind {
  /** group is the API group; `''` is the core group. */
  group: string;
  version: string;
  /** resource is the plural, lower-case resource name used in URLs. */
  resource: string;
  singularName: string;
  kind: string;
  namespaced: boolean;
  shortNames: readonly string[];
  /** verbs are the verbs kevents really answers for this resource. */
  verbs: readonly string[];
  categories: readonly string[];
}

/** EVENT_VERBS are the verbs of the events resource in both groups, as kube-apiserver lists them. */
export const EVENT_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

/**
 * READ_ONLY_VERBS are the verbs of the built-in kinds kevents lists only so that kubectl can
 * resolve the objects users name (`events --for deployment/web`); reads answer an empty list
 * or NotFound, so advertising writes would be a lie.
 */
export const READ_ONLY_VERBS = ['get', 'list', 'watch'] as const;

function kind(
  group: string,
  resource: string,
  kindName: string,
  namespaced: boolean,
  shortNames: readonly string[],
  categories: readonly string[] = ['all'],
): KnownKind {
  return {
    group,
    version: 'v1',
    resource,
    singularName: kindName.toLowerCase(),
    kind: kindName,
    namespaced,
    shortNames,
    verbs: READ_ONLY_VERBS,
    categories,
  };
}

/** builtin lists a built-in kind of api's one kind table, read-only, with its names and scope from there. */
function builtin(kindName: string): KnownKind {
  const b = builtinKind(kindName);
  if (b === undefined) throw new Error(`discovery: ${kindName} is not in api's kind table`);
  return { ...kind(b.group, b.resource, b.kind, b.namespaced, b.shortNames), version: b.version };
}

/** KNOWN_KINDS is every resource kevents lists in discovery, in upstream's group order. */
export const KNOWN_KINDS: readonly KnownKind[] = [
  { ...kind('', 'events', 'Event', true, ['ev'], []), verbs: EVENT_VERBS },
  { ...builtin('Namespace'), categories: [] },
  { ...builtin('Node'), categories: [] },
  builtin('Pod'),
  builtin('Service'),
  builtin('DaemonSet'),
  builtin('Deployment'),
  builtin('ReplicaSet'),
  builtin('StatefulSet'),
  { ...kind('events.k8s.io', 'events', 'Event', true, ['ev'], []), verbs: EVENT_VERBS },
  builtin('CronJob'),
  builtin('Job'),
  // The archive API (src/api/occurrence.ts): occurrences are listed, never written through the API.
  { ...kind('archive.kevents.io', 'occurrences', 'Occurrence', true, ['occ'], []), version: 'v1alpha1', verbs: ['list'] },
  // Incidents (src/api/incident-object.ts) are built from the archive at each list; nothing stores or writes them.
  { ...kind('archive.kevents.io', 'incidents', 'Incident', true, [], []), version: 'v1alpha1', verbs: ['get', 'list'] },
  // The archive's events: the stored core/v1 Events, read-only, under the archive's RBAC.
  { ...kind('archive.kevents.io', 'events', 'Event', true, [], []), version: 'v1alpha1', verbs: READ_ONLY_VERBS },
];

/** GroupVersion names one served group/version; `group` is `''` for core. */
export interface GroupVersion {
  group: string;
  version: string;
}

/** groupVersionString spells a group/version as `apiVersion` does: `v1`, `apps/v1`. */
export function groupVersionString(gv: GroupVersion): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

/** servedGroupVersions lists the served group/versions, core first, then the /apis order. */
export function servedGroupVersions(): GroupVersion[] {
  const seen = new Map<string, GroupVersion>();
  for (const k of KNOWN_KINDS) {
    const gv = { group: k.group, version: k.version };
    seen.set(groupVersionString(gv), gv);
  }
  return [...seen.values()];
}

/** kindsOf lists the known kinds of one group/version, sorted by resource as upstream lists them. */
export function kindsOf(gv: GroupVersion): KnownKind[] {
  return KNOWN_KINDS.filter((k) => k.group === gv.group && k.version === gv.version).sort((a, b) =>
    a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0,
  );
}

/**
 * findKnownKind looks up a served resource by group, version and plural name, for routing
 * reads of the built-in kinds.
 */
export function findKnownKind(group: string, version: string, resource: string): KnownKind | undefined {
  return KNOWN_KINDS.find((k) => k.group === group && k.version === version && k.resource === resource);
}

/** ServerAddressByClientCIDR is metav1.ServerAddressByClientCIDR. */
export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}

/** APIVersions is metav1.APIVersions, the legacy body of `GET /api`. */
export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[];
}

/** GroupVersionForDiscovery is metav1.GroupVersionForDiscovery. */
export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

/** APIGroup is metav1.APIGroup, the body of `GET /apis/<group>`. */
export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

/** APIGroupList is metav1.APIGroupList, the legacy body of `GET /apis`. */
export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroup[];
}

/** APIResource is metav1.APIResource. */
export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

/** APIResourceList is metav1.APIResourceList, the body of `GET /api/v1` and `GET /apis/<g>/<v>`. */
export interface APIResourceList {
  kind: 'APIResourceList';
  /** apiVersion is absent on `/api/v1`, as kube-apiserver sends it. */
  apiVersion?: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

/** ApiVersionsOptions says where clients reach this server. */
export interface ApiVersionsOptions {
  /** serverAddress is `host:port` of this server as clients dial it. */
  serverAddress: string;
}

/** apiVersions returns the legacy `GET /api` document. */
export function apiVersions(options: ApiVersionsOptions): APIVersions {
  return {
    kind: 'APIVersions',
    versions: servedGroupVersions()
      .filter((gv) => gv.group === '')
      .map((gv) => gv.version),
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: options.serverAddress }],
  };
}

function namedGroups(): Map<string, GroupVersionForDiscovery[]> {
  const groups = new Map<string, GroupVersionForDiscovery[]>();
  for (const gv of servedGroupVersions()) {
    if (gv.group === '') continue;
    const versions = groups.get(gv.group) ?? [];
    versions.push({ groupVersion: groupVersionString(gv), version: gv.version });
    groups.set(gv.group, versions);
  }
  return groups;
}

function groupEntry(name: string, versions: GroupVersionForDiscovery[]): APIGroup {
  const preferred = versions[0];
  if (preferred === undefined) throw new Error(`group ${name} has no versions`);
  return { name, versions, preferredVersion: preferred };
}

/** apiGroupList returns the legacy `GET /apis` document. */
export function apiGroupList(): APIGroupList {
  const groups = [...namedGroups()].map(([name, versions]) => groupEntry(name, versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** apiGroup returns the `GET /apis/<group>` document, or undefined for a group kevents does not serve. */
export function apiGroup(group: string): APIGroup | undefined {
  const versions = namedGroups().get(group);
  if (versions === undefined) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) };
}

/**
 * storageVersionHash is kube-apiserver's hash of the version a resource is stored in (the first 8 bytes of
 * sha256("group/version/kind"), base64): both event APIs store core/v1 Events. Resources of kevents' own
 * groups have none.
 */
function storageVersionHash(k: KnownKind): string | undefined {
  if (k.group.endsWith('.kevents.io')) return undefined;
  const gvk = k.resource === 'events' ? '/v1/Event' : `${k.group}/${k.version}/${k.kind}`;
  return createHash('sha256').update(gvk).digest().subarray(0, 8).toString('base64');
}

function apiResource(k: KnownKind): APIResource {
  const r: APIResource = {
    name: k.resource,
    singularName: k.singularName,
    namespaced: k.namespaced,
    kind: k.kind,
    verbs: [...k.verbs],
  };
  if (k.shortNames.length > 0) r.shortNames = [...k.shortNames];
  if (k.categories.length > 0) r.categories = [...k.categories];
  const hash = storageVersionHash(k);
  if (hash !== undefined) r.storageVersionHash = hash;
  return r;
}

/**
 * apiResourceList returns the `GET /api/v1` or `GET /apis/<group>/<version>` document, or
 * undefined for a group/version kevents does not serve.
 */
export function apiResourceList(gv: GroupVersion): APIResourceList | undefined {
  const kinds = kindsOf(gv);
  if (kinds.length === 0) return undefined;
  const resources = kinds.map(apiResource);
  const groupVersion = groupVersionString(gv);
  if (gv.group === '') return { kind: 'APIResourceList', groupVersion, resources };
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

/** AggregatedDiscoveryVersion is a served version of `apidiscovery.k8s.io`. */
export type AggregatedDiscoveryVersion = 'v2' | 'v2beta1';

/** APIResourceDiscovery is apidiscovery.k8s.io APIResourceDiscovery. */
export interface APIResourceDiscovery {
  resource: string;
  responseKind: { group: string; version: string; kind: string };
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

/** APIVersionDiscovery is apidiscovery.k8s.io APIVersionDiscovery. */
export interface APIVersionDiscovery {
  version: string;
  resources: APIResourceDiscovery[];
  freshness: 'Current' | 'Stale';
}

/** APIGroupDiscovery is apidiscovery.k8s.io APIGroupDiscovery. */
export interface APIGroupDiscovery {
  metadata: { name?: string; creationTimestamp: null };
  versions: APIVersionDiscovery[];
}

/** APIGroupDiscoveryList is the aggregated discovery body of `GET /api` and `GET /apis`. */
export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: `apidiscovery.k8s.io/${AggregatedDiscoveryVersion}`;
  metadata: Record<string, never>;
  items: APIGroupDiscovery[];
}

function resourceDiscovery(k: KnownKind): APIResourceDiscovery {
  // kube-apiserver copies the legacy APIResource, whose group and version are empty for a
  // top-level resource, so responseKind carries only the kind.
  const r: APIResourceDiscovery = {
    resource: k.resource,
    responseKind: { group: '', version: '', kind: k.kind },
    scope: k.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: k.singularName,
    verbs: [...k.verbs],
  };
  if (k.shortNames.length > 0) r.shortNames = [...k.shortNames];
  if (k.categories.length > 0) r.categories = [...k.categories];
  return r;
}

/**
 * aggregatedDiscovery returns the aggregated discovery document of `GET /api` (`root: 'api'`,
 * the core group) or `GET /apis` (`root: 'apis'`, every named group).
 */
export function aggregatedDiscovery(root: 'api' | 'apis', version: AggregatedDiscoveryVersion = 'v2'): APIGroupDiscoveryList {
  const byGroup = new Map<string, APIVersionDiscovery[]>();
  for (const gv of servedGroupVersions()) {
    if ((gv.group === '') !== (root === 'api')) continue;
    const versions = byGroup.get(gv.group) ?? [];
    versions.push({ version: gv.version, resources: kindsOf(gv).map(resourceDiscovery), freshness: 'Current' });
    byGroup.set(gv.group, versions);
  }
  const items = [...byGroup].map(([group, versions]): APIGroupDiscovery => ({
    metadata: group === '' ? { creationTimestamp: null } : { name: group, creationTimestamp: null },
    versions,
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

/**
 * discoveryETag is the ETag kube-apiserver puts on aggregated discovery (quoted, upper-case hex
 * sha512 of the document's JSON); a request whose If-None-Match equals it gets 304.
 */
export function discoveryETag(doc: APIGroupDiscoveryList): string {
  return JSON.stringify(createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase());
}

/** DiscoveryFormat is what a discovery request negotiated: aggregated v2, v2beta1, or the legacy documents. */
export type DiscoveryFormat = AggregatedDiscoveryVersion | 'legacy';

/** AcceptClause is one parsed clause of an Accept header. */
export interface AcceptClause {
  type: string;
  subType: string;
  q: number;
  params: Record<string, string>;
}

function trimSpaces(s: string): string {
  return s.replace(/^ +| +$/g, '');
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i === -1 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

function parseClause(raw: string): AcceptClause | undefined {
  const [range = '', paramText] = splitOnce(trimSpaces(raw), ';');
  const [type, subRest] = splitOnce(range, '/');
  const clause: AcceptClause = { type: trimSpaces(type), subType: '', q: 1, params: {} };
  if (subRest === undefined || subRest === '') {
    // A bare `*` means `*/*`; any other bare word is not a media range.
    if (clause.type !== '*') return undefined;
    clause.subType = '*';
  } else {
    if (subRest.includes('/')) return undefined;
    clause.subType = trimSpaces(subRest);
  }
  for (const part of paramText === undefined || paramText === '' ? [] : paramText.split(';')) {
    const [key, value] = splitOnce(part, '=');
    if (value === undefined || value.includes('=')) continue;
    const name = trimSpaces(key);
    if (name === 'q') {
      // Go's ParseFloat error leaves 0, which ranks the clause last but keeps it.
      const q = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value) ? Number(value) : 0;
      clause.q = q;
    } else {
      clause.params[name] = trimSpaces(value);
    }
  }
  return clause;
}

function ranksBefore(a: AcceptClause, b: AcceptClause): boolean {
  if (a.q > b.q) return true;
  if (a.type !== '*' && b.type === '*') return true;
  if (a.subType !== '*' && b.subType === '*') return true;
  return false;
}

/**
 * parseAccept parses an Accept header the way kube-apiserver does (goautoneg): clauses split
 * on `,` and `;`, a missing q is 1, and clauses are ordered by q, then concrete types before
 * wildcards, otherwise in header order. A q of 0 does not remove a clause.
 */
export function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const raw of header === '' ? [] : header.split(',')) {
    const clause = parseClause(raw);
    if (clause !== undefined) clauses.push(clause);
  }
  // Insertion sort with goautoneg's comparison, as Go's sort.Sort does for short inputs:
  // that comparison is not a strict order, so a library sort could order ties differently.
  for (let i = 1; i < clauses.length; i++) {
    for (let j = i; j > 0; j--) {
      const cur = clauses[j];
      const prev = clauses[j - 1];
      if (cur === undefined || prev === undefined || !ranksBefore(cur, prev)) break;
      clauses[j] = prev;
      clauses[j - 1] = cur;
    }
  }
  return clauses;
}

/** NegotiateDiscoveryOptions tune discovery negotiation. */
export interface NegotiateDiscoveryOptions {
  /**
   * v2beta1 serves aggregated discovery v2beta1 (default true). kube-apiserver 1.33 stops
   * serving it by default (feature gate AggregatedDiscoveryRemoveBetaType) and answers those
   * clients with the legacy documents, but kubectl 1.27–1.29 ask only for v2beta1, and serving
   * it spares them one request per group.
   */
  v2beta1?: boolean;
}

function aggregatedVersionOf(clause: AcceptClause, allowBeta: boolean): AggregatedDiscoveryVersion | undefined {
  const { g, v, as } = clause.params;
  if (g !== 'apidiscovery.k8s.io' || as !== 'APIGroupDiscoveryList') return undefined;
  if (v === 'v2') return 'v2';
  if (v === 'v2beta1' && allowBeta) return 'v2beta1';
  return undefined;
}

function acceptsJson(clause: AcceptClause): boolean {
  return (
    (clause.type === 'application' && (clause.subType === 'json' || clause.subType === '*')) ||
    (clause.type === '*' && clause.subType === '*')
  );
}

/**
 * negotiateDiscovery decides what `GET /api` and `GET /apis` answer. As in kube-apiserver, the
 * first clause (in parseAccept order) that asks for an aggregated discovery type kevents can
 * encode wins, wherever plain clauses sit; with none, the legacy documents are served. kevents
 * encodes JSON only, so a protobuf clause is passed over.
 */
export function negotiateDiscovery(accept: string | undefined, options: NegotiateDiscoveryOptions = {}): DiscoveryFormat {
  const allowBeta = options.v2beta1 ?? true;
  for (const clause of parseAccept(accept ?? '')) {
    if (!acceptsJson(clause)) continue;
    const version = aggregatedVersionOf(clause, allowBeta);
    if (version !== undefined) return version;
  }
  return 'legacy';
}

/** AGGREGATED_DISCOVERY_V2_CONTENT_TYPE is the Content-Type of an aggregated discovery v2 answer; kubectl checks it exactly. */
export const AGGREGATED_DISCOVERY_V2_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
/** AGGREGATED_DISCOVERY_V2BETA1_CONTENT_TYPE is the Content-Type of an aggregated discovery v2beta1 answer. */
export const AGGREGATED_DISCOVERY_V2BETA1_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

/** discoveryContentType is the exact Content-Type to send with a discovery answer of the given format. */
export function discoveryContentType(format: DiscoveryFormat): string {
  if (format === 'v2') return AGGREGATED_DISCOVERY_V2_CONTENT_TYPE;
  if (format === 'v2beta1') return AGGREGATED_DISCOVERY_V2BETA1_CONTENT_TYPE;
  return 'application/json';
}
