import { fieldNotSupported, newBadRequest, newInvalid } from '../../api/index.js';
import type { FieldError, StatusError } from '../../api/index.js';

/**
 * ParsedQuery is the query string of a request, decoded as the API server's
 * parameter codec does: booleans as its query conversion reads them (only 0 and false are false), integers as int64.
 */
export interface ListQuery {
  watch: boolean;
  resourceVersion: string | undefined;
  resourceVersionMatch: string | undefined;
  limit: number;
  continue: string | undefined;
  fieldSelector: string;
  labelSelector: string;
  timeoutSeconds: number | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
  includeObject: 'None' | 'Metadata' | 'Object' | undefined;
}

/**
 * parseBool reads a query boolean as kube-apiserver's query conversion does (seen against 1.33): only
 * `0` and `false` in any case are false; anything else, `f`, `no` and the empty string included, is true.
 */
export function parseBool(value: string): boolean {
  return !(value === '0' || value.toLowerCase() === 'false');
}

function parseInt64(value: string): number {
  if (!/^[+-]?\d+$/.test(value)) {
    throw newBadRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    throw newBadRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`);
  }
  return n;
}

function last(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name);
  return all.length === 0 ? undefined : all[0];
}

/** MAX_SELECTOR_BYTES caps a label or field selector: far past what a person or a controller writes, far short of what stalls a list. */
export const MAX_SELECTOR_BYTES = 32 * 1024;
/** MAX_SELECTOR_TERMS caps a selector's comma-separated terms (requirements, and the values of `in` and `notin` sets). */
export const MAX_SELECTOR_TERMS = 256;

/**
 * checkSelectorSize refuses a selector whose matching would cost each listed event
 * more than a bounded amount of work (kube-apiserver has no such limit beyond its
 * 1 MiB of headers): a 400 naming the parameter and the cap.
 */
export function checkSelectorSize(name: 'labelSelector' | 'fieldSelector', text: string): void {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_SELECTOR_BYTES) throw newBadRequest(`${name}: Too long: must have at most ${MAX_SELECTOR_BYTES} bytes, not ${bytes}`);
  let terms = 1;
  for (let i = text.indexOf(','); i >= 0; i = text.indexOf(',', i + 1)) terms++;
  if (terms > MAX_SELECTOR_TERMS) throw newBadRequest(`${name}: Too many terms: must have at most ${MAX_SELECTOR_TERMS} comma-separated requirements and values, not ${terms}`);
}

/**
 * parseListQuery decodes and validates list/watch options (ValidateListOptions). `watch`, when
 * given, is the request's own reading of it (the shared request parser's), which the parameter does not override.
 */
export function parseListQuery(params: URLSearchParams, watch?: boolean): ListQuery {
  const watchText = last(params, 'watch');
  const bookmarks = last(params, 'allowWatchBookmarks');
  const initial = last(params, 'sendInitialEvents');
  const limitText = last(params, 'limit');
  const timeoutText = last(params, 'timeoutSeconds');
  const include = last(params, 'includeObject');
  if (include !== undefined && include !== 'None' && include !== 'Metadata' && include !== 'Object' && include !== '') {
    throw newBadRequest(`includeObject: Unsupported value: ${JSON.stringify(include)}: supported values: "None", "Metadata", "Object"`);
  }
  const q: ListQuery = {
    watch: watch ?? (watchText !== undefined && parseBool(watchText)),
    resourceVersion: emptyToUndefined(last(params, 'resourceVersion')),
    resourceVersionMatch: emptyToUndefined(last(params, 'resourceVersionMatch')),
    limit: limitText === undefined || limitText === '' ? 0 : Math.max(0, parseInt64(limitText)),
    continue: emptyToUndefined(last(params, 'continue')),
    fieldSelector: last(params, 'fieldSelector') ?? '',
    labelSelector: last(params, 'labelSelector') ?? '',
    timeoutSeconds: timeoutText === undefined || timeoutText === '' ? undefined : parseInt64(timeoutText),
    allowWatchBookmarks: bookmarks !== undefined && parseBool(bookmarks),
    sendInitialEvents: initial === undefined || initial === '' ? undefined : parseBool(initial),
    includeObject: include === '' ? undefined : (include),
  };
  checkSelectorSize('labelSelector', q.labelSelector);
  checkSelectorSize('fieldSelector', q.fieldSelector);
  const errs = q.watch ? validateWatch(q) : validateList(q);
  if (errs.length > 0) throw newInvalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errs);
  return q;
}

function emptyToUndefined(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

const forbidden = (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, detail });

function validateList(q: ListQuery): FieldError[] {
  const errs: FieldError[] = [];
  const match = q.resourceVersionMatch;
  if (match !== undefined) {
    if (q.resourceVersion === undefined) {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    }
    if (q.continue !== undefined) {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', badValue: match, detail: 'supported values: "Exact", "NotOlderThan", ""' });
    }
    if (match === 'Exact' && q.resourceVersion === '0') {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (q.sendInitialEvents !== undefined) errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

function validateWatch(q: ListQuery): FieldError[] {
  const errs: FieldError[] = [];
  const match = q.resourceVersionMatch;
  if (q.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (match !== undefined) {
    if (q.sendInitialEvents === undefined) {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    }
    if (match !== 'NotOlderThan') {
      errs.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', badValue: match, detail: 'supported values: "NotOlderThan"' });
    }
    if (q.continue !== undefined) {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  }
  return errs;
}

/** parseResourceVersion reads a resourceVersion parameter as the store's integer revision. */
export function parseResourceVersion(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw newBadRequest(`resourceVersion: Invalid value: ${JSON.stringify(value)}: strconv.ParseUint: parsing ${JSON.stringify(value)}: invalid syntax`);
  }
  return Number(value);
}

/** FieldValidation is the server-side field validation level of a write. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** WriteOptionsKind is the options object upstream decodes a write's query into (and names in its errors). */
export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/** parseWriteQuery reads the query parameters of create, update and patch; bad values are a 422 of the options kind, as upstream's. */
export function parseWriteQuery(params: URLSearchParams, kind: WriteOptionsKind = 'CreateOptions'): { fieldValidation: FieldValidation; dryRun: boolean; fieldManager: string | undefined } {
  const fv = last(params, 'fieldValidation') ?? '';
  let fieldValidation: FieldValidation;
  const invalid = (e: FieldError): StatusError => newInvalid({ group: 'meta.k8s.io', kind }, '', [e]);
  switch (fv) {
    case '': case 'Warn': fieldValidation = 'Warn'; break;
    case 'Strict': fieldValidation = 'Strict'; break;
    case 'Ignore': fieldValidation = 'Ignore'; break;
    default:
      throw invalid(fieldNotSupported('fieldValidation', fv, ['', 'Ignore', 'Strict', 'Warn']));
  }
  const dry = params.getAll('dryRun');
  for (const d of dry) {
    if (d !== 'All') throw invalid(fieldNotSupported('dryRun', dry, ['All']));
  }
  const fieldManager = last(params, 'fieldManager');
  if (fieldManager !== undefined && Buffer.byteLength(fieldManager) > 128) {
    throw newBadRequest('fieldManager: Too long: may not be more than 128 bytes');
  }
  return { fieldValidation, dryRun: dry.length > 0, fieldManager };
}
