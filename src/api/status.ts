import type { Status, StatusCause, StatusDetails } from './types.js';

/**
 * StatusError carries an API `Status` as a thrown error. Code anywhere in kevents
 * throws one of these to answer a request; the server's final writer sends `status`.
 */
export class StatusError extends Error {
  readonly status: Status;
  constructor(status: Status, options?: { cause?: unknown }) {
    super(status.message ?? status.reason ?? 'unknown error', options);
    this.name = 'StatusError';
    this.status = status;
  }
}

/** StatusReason lists the metav1.StatusReason values kevents produces. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'Timeout'
  | 'TooManyRequests'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'ServiceUnavailable'
  /** InsufficientStorage is kevents' own reason (metav1 has none for 507): the archive's disk is full. */
  | 'InsufficientStorage';

/** failureStatus builds a Failure `Status` object. */
export function failureStatus(code: number, reason: StatusReason, message: string, details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details !== undefined) status.details = details;
  return status;
}

/** successStatus builds the Success `Status` returned by deletes. */
export function successStatus(details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
  if (details !== undefined) status.details = details;
  return status;
}

/** newStatusError is a Failure with any code, and no reason where upstream gives none. */
export function newStatusError(code: number, reason: StatusReason | undefined, message: string, details?: StatusDetails): StatusError {
  const status = failureStatus(code, reason ?? 'InternalError', message, details);
  if (reason === undefined) delete status.reason;
  return new StatusError(status);
}

function err(code: number, reason: StatusReason, message: string, details?: StatusDetails): StatusError {
  return new StatusError(failureStatus(code, reason, message, details));
}

/** QualifiedResource names a resource in errors: `events`, or `events.events.k8s.io`. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

function qualified(r: QualifiedResource): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}

/** newBadRequest is a 400 BadRequest. */
export function newBadRequest(message: string): StatusError {
  return err(400, 'BadRequest', message);
}

/** newNotFound is upstream's `<resource> "<name>" not found`. */
export function newNotFound(r: QualifiedResource, name: string): StatusError {
  return err(404, 'NotFound', `${qualified(r)} "${name}" not found`, { name, group: r.group || undefined, kind: r.resource });
}

/** newPathNotFound is the 404 for a URL the server does not serve. */
export function newPathNotFound(): StatusError {
  return err(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** newAlreadyExists is upstream's `<resource> "<name>" already exists`. */
export function newAlreadyExists(r: QualifiedResource, name: string): StatusError {
  return err(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, { name, group: r.group || undefined, kind: r.resource });
}

/** newConflict is the 409 for a failed optimistic-concurrency check. */
export function newConflict(r: QualifiedResource, name: string, reason: string): StatusError {
  return err(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${reason}`, {
    name,
    group: r.group || undefined,
    kind: r.resource,
  });
}

/** OPTIMISTIC_LOCK_ERROR_MSG is upstream's conflict reason for a stale resourceVersion. */
export const OPTIMISTIC_LOCK_ERROR_MSG =
  'the object has been modified; please apply your changes to the latest version and try again';

/** newInvalid is the 422 of a failed validation: `<Kind> "<name>" is invalid: …`. */
export function newInvalid(kind: { group: string; kind: string }, name: string, causes: FieldError[]): StatusError {
  const seen = new Set<string>();
  const messages: string[] = [];
  for (const c of causes) {
    const text = fieldErrorString(c);
    if (!seen.has(text)) {
      seen.add(text);
      messages.push(text);
    }
  }
  const body = messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`;
  const qualifiedKind = kind.group === '' ? kind.kind : `${kind.kind}.${kind.group}`;
  const details: StatusDetails = {
    name: name || undefined,
    group: kind.group || undefined,
    kind: kind.kind,
    causes: causes.map((c): StatusCause => ({ reason: c.type, message: fieldErrorBody(c), field: c.field })),
  };
  return err(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${body}`, details);
}

/** newExpired is a 410 Expired with the given message. */
export function newExpired(message: string): StatusError {
  return err(410, 'Expired', message);
}

/** newGone is a 410 Gone with the given message. */
export function newGone(message: string): StatusError {
  return err(410, 'Gone', message);
}

/** newTooLargeResourceVersion is the 504 for a resourceVersion newer than the store. */
export function newTooLargeResourceVersion(requested: number | bigint, current: number | bigint): StatusError {
  return err(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
  });
}

/** newMethodNotAllowed is the 405 for a verb the resource does not support. */
export function newMethodNotAllowed(): StatusError {
  return err(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

/** newNotAcceptable is the 406 for an Accept header the server cannot serve. */
export function newNotAcceptable(accepted: string[]): StatusError {
  return err(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

/**
 * newRouteNotAcceptable is kube-apiserver's 406 for an Accept header none of a
 * route's representations matches: its router's own text, before any handler runs.
 */
export function newRouteNotAcceptable(produces: readonly string[]): StatusError {
  return err(406, 'NotAcceptable', `406: Not Acceptable\n\nAvailable representations: ${produces.join(', ')}`, {});
}

/** newUnsupportedMediaType is the 415 for a body type the server cannot read. */
export function newUnsupportedMediaType(accepted: string[]): StatusError {
  return err(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
}

/** MAX_REQUEST_BODY_BYTES is upstream's limit on a request body (3 MiB). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** newRequestEntityTooLarge is the 413 for a body over the limit. */
export function newRequestEntityTooLarge(limit: number = MAX_REQUEST_BODY_BYTES): StatusError {
  return err(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

/** newTooManyRequests is a 429 with a Retry-After hint. */
export function newTooManyRequests(message: string, retryAfterSeconds: number): StatusError {
  return err(429, 'TooManyRequests', message, { retryAfterSeconds });
}

/** newTimeout is a 504 Timeout. */
export function newTimeout(message: string, retryAfterSeconds = 0): StatusError {
  return err(504, 'Timeout', message, retryAfterSeconds > 0 ? { retryAfterSeconds } : {});
}

/**
 * newInsufficientStorage is the 507 of a write the store had no space for. No
 * Retry-After: kubectl reports it at once rather than waiting out ten retries
 * of a condition that lasts until someone frees space; recorders retry 5xx.
 */
export function newInsufficientStorage(message: string): StatusError {
  return err(507, 'InsufficientStorage', message);
}

/** newServiceUnavailable is a 503. */
export function newServiceUnavailable(message: string): StatusError {
  return err(503, 'ServiceUnavailable', message);
}

/** newUnauthorized is kube-apiserver's 401 for a request without valid credentials: message `Unauthorized`. */
export function newUnauthorized(): StatusError {
  return err(401, 'Unauthorized', 'Unauthorized');
}

/** AuthorizationAttributes are what a 403 names: who asked for which verb on what (authorizer.Attributes). */
export interface AuthorizationAttributes {
  user: string;
  verb: string;
  /** resourceRequest is false for a path outside the resource tree (`/metrics`, discovery). */
  resourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/**
 * newForbidden is kube-apiserver's 403 (responsewriters.Forbidden over apierrors.NewForbidden):
 * `events is forbidden: User "x" cannot create resource "events" in API group "" in the namespace "y"`,
 * followed by `: <reason>` when the authorizer gave one.
 */
export function newForbidden(a: AuthorizationAttributes, reason = ''): StatusError {
  let message: string;
  if (!a.resourceRequest) {
    message = `User ${strconvQuote(a.user)} cannot ${a.verb} path ${strconvQuote(a.path)}`;
  } else {
    const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
    const where = a.namespace === '' ? 'at the cluster scope' : `in the namespace ${strconvQuote(a.namespace)}`;
    message = `User ${strconvQuote(a.user)} cannot ${a.verb} resource ${strconvQuote(resource)} in API group ${strconvQuote(a.apiGroup)} ${where}`;
  }
  if (reason !== '') message = `${message}: ${reason}`;
  const resource = a.resourceRequest ? a.resource : '';
  const group = a.resourceRequest ? a.apiGroup : '';
  const qualifiedName = group === '' ? resource : `${resource}.${group}`;
  const name = a.resourceRequest ? a.name : '';
  let text: string;
  if (qualifiedName === '') text = `forbidden: ${message}`;
  else if (name === '') text = `${qualifiedName} is forbidden: ${message}`;
  else text = `${qualifiedName} ${strconvQuote(name)} is forbidden: ${message}`;
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (group !== '') details.group = group;
  if (resource !== '') details.kind = resource;
  return err(403, 'Forbidden', text, details);
}

/** newInternalError is upstream's 500: `Internal error occurred: <cause>`. */
export function newInternalError(cause: unknown): StatusError {
  const text = cause instanceof Error ? cause.message : String(cause);
  const e = err(500, 'InternalError', `Internal error occurred: ${text}`, { causes: [{ message: text }] });
  return Object.assign(e, { cause });
}

/** isStatusError tells whether a thrown value carries an API `Status` (checked by shape). */
export function isStatusError(e: unknown): e is { status: Status } {
  if (typeof e !== 'object' || e === null || !('status' in e)) return false;
  const s = (e).status;
  return typeof s === 'object' && s !== null && (s as { kind?: unknown }).kind === 'Status';
}

/** reasonOf returns the Status reason of a thrown value, or undefined. */
export function reasonOf(e: unknown): string | undefined {
  return isStatusError(e) ? e.status.reason : undefined;
}

/** isNotFound tells whether an error is a NotFound Status. */
export const isNotFound = (e: unknown): boolean => reasonOf(e) === 'NotFound';
/** isAlreadyExists tells whether an error is an AlreadyExists Status. */
export const isAlreadyExists = (e: unknown): boolean => reasonOf(e) === 'AlreadyExists';
/** isConflict tells whether an error is a Conflict Status. */
export const isConflict = (e: unknown): boolean => reasonOf(e) === 'Conflict';
/** isInvalid tells whether an error is an Invalid Status. */
export const isInvalid = (e: unknown): boolean => reasonOf(e) === 'Invalid';
/** isExpired tells whether an error is a 410 (Expired or Gone). */
export const isExpired = (e: unknown): boolean => reasonOf(e) === 'Expired' || reasonOf(e) === 'Gone';

/** FieldErrorType is the machine-readable type of a field error (field.ErrorType). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueDuplicate';

/** FieldError is apimachinery's field.Error: one problem at one field path. */
export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** badValue is the value shown after `Invalid value: `; undefined omits it. */
  badValue?: unknown;
  detail?: string;
}

const typeText: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueDuplicate: 'Duplicate value',
};

/** formatBadValue prints a bad value as Go's field errors do: strings `%q`-quoted, structs as Go JSON. */
export function formatBadValue(v: unknown): string {
  if (typeof v === 'string') return strconvQuote(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  // A []string (a repeated query parameter) is printed with Go's %#v.
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return `[]string{${v.map(strconvQuote).join(', ')}}`;
  // Go's json.Marshal escapes HTML characters and the JS line separators; they only occur inside strings.
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const goPrintable = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;
const goShortEscapes: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

// strconvQuote is Go's strconv.Quote (`%q`): printable runes kept, the rest escaped.
function strconvQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd'; // a lone surrogate decodes to U+FFFD in Go
    else if (cp > 0x7f && goPrintable.test(ch)) out += ch;
    else if (goShortEscapes[ch] !== undefined) out += goShortEscapes[ch];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** fieldErrorBody is a field error without its path: `Invalid value: "x": detail`. */
export function fieldErrorBody(e: FieldError): string {
  let s = typeText[e.type];
  const showsValue = e.type === 'FieldValueInvalid' || e.type === 'FieldValueNotSupported' || e.type === 'FieldValueDuplicate';
  if (showsValue && e.badValue !== undefined) s += `: ${formatBadValue(e.badValue)}`;
  if (e.detail !== undefined && e.detail !== '') s += `: ${e.detail}`;
  return s;
}

/** fieldErrorString is the full text of a field error: `<path>: <body>`. */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}
