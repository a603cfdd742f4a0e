import { newBadRequest } from './status.js';
import { CLUSTER_FIELD, eventCluster } from './cluster.js';
import type { CoreEvent, EventApi } from './types.js';

/** FieldSelectorOperator is the operator of one field requirement; `==` parses to `=`. */
export type FieldSelectorOperator = '=' | '!=';

/** FieldRequirement is one term of a field selector: `field=value` or `field!=value`. */
export interface FieldRequirement {
  field: string;
  operator: FieldSelectorOperator;
  value: string;
}

/**
 * IndexedFieldName names the internal fields a store may narrow a list by index.
 * It mirrors the storage contract's `IndexedField`, which `api` may not import.
 */
export type IndexedFieldName =
  | 'metadata.name'
  | 'involvedObject.kind'
  | 'involvedObject.namespace'
  | 'involvedObject.name'
  | 'involvedObject.uid'
  | 'reason'
  | 'type';

const indexedFields: ReadonlySet<string> = new Set<IndexedFieldName>([
  'metadata.name',
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'reason',
  'type',
]);

const objectRefFields = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'] as const;

/**
 * FIELD_LABELS maps, per API, every field label the apiserver accepts to the
 * internal selectable field it names. Anything else is a 400. CLUSTER_FIELD is
 * kevents' own (kube-apiserver refuses it), for archives of several clusters.
 */
export const FIELD_LABELS: Readonly<Record<EventApi, ReadonlyMap<string, string>>> = {
  v1: new Map([
    ...objectRefFields.map((f): [string, string] => [`involvedObject.${f}`, `involvedObject.${f}`]),
    ...['reason', 'reportingComponent', 'source', 'type', 'metadata.namespace', 'metadata.name', CLUSTER_FIELD].map(
      (f): [string, string] => [f, f],
    ),
  ]),
  'events.k8s.io/v1': new Map([
    ...objectRefFields.map((f): [string, string] => [`regarding.${f}`, `involvedObject.${f}`]),
    ['reportingController', 'reportingComponent'],
    // kube-apiserver 1.33 refuses `source` here, although its internal field set has it.
    ...['reason', 'type', 'metadata.namespace', 'metadata.name', CLUSTER_FIELD].map((f): [string, string] => [f, f]),
  ]),
};

/** escapeFieldValue escapes `\`, `,` and `=` so any string can be a selector value (fields.EscapeValue). */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * unescapeFieldValue reverses escapeFieldValue (fields.UnescapeValue). An unknown
 * escape, a trailing backslash or a bare `,`/`=` is a 400; upstream prints the bare
 * character as its code point number, and so does this.
 */
export function unescapeFieldValue(text: string): string {
  if (!/[\\,=]/.test(text)) return text;
  let out = '';
  let inSlash = false;
  for (const c of text) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw newBadRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      throw newBadRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw newBadRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

// A backslash protects the next character from being read as a term separator.
function splitTerms(text: string): string[] {
  if (text === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

// `!=` and `==` are tried before `=` at each position so `a==b` does not keep a `=` in its value.
const termOperators = ['!=', '==', '='] as const;

function splitTerm(term: string): { lhs: string; op: string; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of termOperators) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/**
 * compareUtf8 orders strings as Go's sort.Strings does (by UTF-8 bytes, which is
 * code point order); plain `<` on UTF-16 units differs above U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(j) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  if (i < a.length) return 1;
  return j < b.length ? -1 : 0;
}

/**
 * parseFieldSelector parses a field selector as the apiserver does (fields.ParseSelector):
 * comma-joined `=`, `==`, `!=` terms, nothing trimmed, empty terms skipped, the
 * terms sorted. Malformed text throws a 400 BadRequest with upstream's message.
 */
export function parseFieldSelector(text: string): FieldRequirement[] {
  const parts = splitTerms(text).sort(compareUtf8);
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const term = splitTerm(part);
    if (term === undefined) throw newBadRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const value = unescapeFieldValue(term.rhs);
    reqs.push({ field: term.lhs, operator: term.op === '!=' ? '!=' : '=', value });
  }
  return reqs;
}

/**
 * convertFieldSelector maps each requirement's label to the internal selectable
 * field for the API it came through, or throws upstream's 400
 * `field label not supported: <label>`.
 */
export function convertFieldSelector(reqs: readonly FieldRequirement[], api: EventApi): FieldRequirement[] {
  const labels = FIELD_LABELS[api];
  return reqs.map((r) => {
    const field = labels.get(r.field);
    if (field === undefined) throw newBadRequest(`field label not supported: ${r.field}`);
    return { ...r, field };
  });
}

/**
 * eventSelectableFields is the field set the apiserver matches an event against
 * (EventToSelectableFields). Absent fields are `""`; `source` falls back to
 * reportingController so events written through events.k8s.io match `source=`.
 */
export function eventSelectableFields(e: CoreEvent): Record<string, string> {
  // Stored objects come from JSON, so "required" parts may still be missing.
  const ref = (e.involvedObject as CoreEvent['involvedObject'] | undefined) ?? {};
  const meta = (e.metadata as CoreEvent['metadata'] | undefined) ?? {};
  const reportingComponent = e.reportingComponent ?? '';
  const component = e.source?.component ?? '';
  return {
    'metadata.name': meta.name ?? '',
    'metadata.namespace': meta.namespace ?? '',
    'involvedObject.kind': ref.kind ?? '',
    'involvedObject.namespace': ref.namespace ?? '',
    'involvedObject.name': ref.name ?? '',
    'involvedObject.uid': ref.uid ?? '',
    'involvedObject.apiVersion': ref.apiVersion ?? '',
    'involvedObject.resourceVersion': ref.resourceVersion ?? '',
    'involvedObject.fieldPath': ref.fieldPath ?? '',
    reason: e.reason ?? '',
    reportingComponent,
    source: component === '' ? reportingComponent : component,
    type: e.type ?? '',
    [CLUSTER_FIELD]: eventCluster(e),
  };
}

function fieldsMatch(reqs: readonly FieldRequirement[], fields: Record<string, string>): boolean {
  for (const r of reqs) {
    const actual = Object.hasOwn(fields, r.field) ? (fields[r.field] ?? '') : '';
    if ((actual === r.value) !== (r.operator === '=')) return false;
  }
  return true;
}

/**
 * matchesFields tells whether an event satisfies every (converted) requirement.
 * An unknown field reads as `""`, as upstream's fields.Set does.
 */
export function matchesFields(reqs: readonly FieldRequirement[], e: CoreEvent): boolean {
  return reqs.length === 0 || fieldsMatch(reqs, eventSelectableFields(e));
}

/** CompiledFieldSelector is a field selector parsed and converted for one API, ready to match. */
export interface CompiledFieldSelector {
  /** requirements are in internal field names. */
  requirements: FieldRequirement[];
  matches(e: CoreEvent): boolean;
  /** equalities are the `=` requirements on indexable fields (the first one per field). */
  equalities: Partial<Record<IndexedFieldName, string>>;
}

/**
 * compileFieldSelector parses `text`, converts its labels for `api` and returns a
 * matcher plus the equalities a store may serve from an index. Errors are 400s.
 */
export function compileFieldSelector(text: string | undefined, api: EventApi): CompiledFieldSelector {
  const requirements = convertFieldSelector(parseFieldSelector(text ?? ''), api);
  const equalities: Partial<Record<IndexedFieldName, string>> = {};
  for (const r of requirements) {
    if (r.operator !== '=' || !indexedFields.has(r.field)) continue;
    const key = r.field as IndexedFieldName;
    // Like RequiresExactMatch, the first equality wins; the predicate still checks the rest.
    if (equalities[key] === undefined) equalities[key] = r.value;
  }
  return { requirements, matches: (e) => matchesFields(requirements, e), equalities };
}

/** formatFieldSelector prints requirements back as selector text, values escaped (`==` prints as `=`). */
export function formatFieldSelector(reqs: readonly FieldRequirement[]): string {
  return reqs.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
}
