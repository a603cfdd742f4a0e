import { OCCURRENCE_FIELDS, newBadRequest, occurrenceFieldValue, parseFieldSelector, parseLabelSelector, parseTime } from '../../api/index.js';
import type { Occurrence, OccurrenceField } from '../../api/index.js';
import type { OccurrenceCursor, OccurrenceQuery } from '../../storage/index.js';
import { checkSelectorSize } from '../rest/query.js';

const TOKEN_VERSION = 'archive.kevents.io/v1alpha1';
const FIELDS: ReadonlySet<string> = new Set(OCCURRENCE_FIELDS);

/** ArchiveListQuery is a parsed occurrence list request. */
export interface ArchiveListQuery {
  query: OccurrenceQuery;
  limit: number;
}

function timeParam(params: URLSearchParams, name: 'since' | 'until'): number | undefined {
  const text = params.get(name);
  if (text === null || text === '') return undefined;
  try {
    // parseTime reads RFC 3339 with any fraction; the archive keeps microseconds.
    const ms = parseTime(text);
    const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
    const micros = Number(fraction.padEnd(6, '0').slice(3, 6) || '0');
    return ms * 1000 + micros;
  } catch {
    throw newBadRequest(`${name}: invalid time ${JSON.stringify(text)}: use RFC 3339, e.g. 2025-01-01T00:00:00Z`);
  }
}

/** encodeArchiveContinue makes the continue token of a page that ended at `at`. */
export function encodeArchiveContinue(at: OccurrenceCursor): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, t: at.observedMicros, id: at.id }), 'utf8').toString('base64url');
}

function decodeArchiveContinue(token: string): OccurrenceCursor {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(token)) throw new Error('not base64url');
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw newBadRequest('invalid continue token: continue key is not valid');
  }
  const { v, t, id } = (parsed ?? {}) as { v?: unknown; t?: unknown; id?: unknown };
  if (v !== TOKEN_VERSION || typeof t !== 'number' || !Number.isSafeInteger(t) || typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
    throw newBadRequest('invalid continue token: continue key is not valid');
  }
  return { observedMicros: t, id };
}

/**
 * parseArchiveListQuery reads an occurrence list request: `since`/`until`,
 * `fieldSelector` over the occurrence fields, `labelSelector` (occurrences have
 * no labels, so only selectors that match nothing-labelled pass), `limit` and
 * `continue`. Bad input is a 400 with the problem named.
 */
export function parseArchiveListQuery(params: URLSearchParams, namespace: string | undefined): ArchiveListQuery {
  const query: OccurrenceQuery = {};
  if (namespace !== undefined) query.namespace = namespace;
  const since = timeParam(params, 'since');
  const until = timeParam(params, 'until');
  if (since !== undefined) query.sinceMicros = since;
  if (until !== undefined) query.untilMicros = until;
  if (since !== undefined && until !== undefined && until <= since) throw newBadRequest('until must be after since');

  checkSelectorSize('fieldSelector', params.get('fieldSelector') ?? '');
  checkSelectorSize('labelSelector', params.get('labelSelector') ?? '');
  const reqs = parseFieldSelector(params.get('fieldSelector') ?? '');
  const fieldEquals: Partial<Record<OccurrenceField, string>> = {};
  for (const r of reqs) {
    if (!FIELDS.has(r.field)) throw newBadRequest(`field label not supported: ${r.field}`);
    if (r.operator === '=' && fieldEquals[r.field as OccurrenceField] === undefined) fieldEquals[r.field as OccurrenceField] = r.value;
  }
  if (Object.keys(fieldEquals).length > 0) query.fieldEquals = fieldEquals;
  const labels = (params.get('labelSelector') ?? '') === '' ? undefined : parseLabelSelector(params.get('labelSelector')!);
  const negated = reqs.filter((r) => r.operator === '!=');
  if (negated.length > 0 || labels !== undefined) {
    query.predicate = (o: Occurrence): boolean =>
      negated.every((r) => occurrenceFieldValue(o, r.field as OccurrenceField) !== r.value) && (labels === undefined || labels.matches(undefined));
  }

  const limitText = params.get('limit') ?? '';
  let limit = 0;
  if (limitText !== '') {
    if (!/^[+-]?\d+$/.test(limitText) || !Number.isSafeInteger(Number(limitText))) {
      throw newBadRequest(`limit: strconv.ParseInt: parsing ${JSON.stringify(limitText)}: invalid syntax`);
    }
    limit = Math.max(0, Number(limitText));
  }
  if (limit > 0) query.limit = limit;
  const cont = params.get('continue') ?? '';
  if (cont !== '') query.after = decodeArchiveContinue(cont);
  return { query, limit };
}
