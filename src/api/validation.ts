/**
 * Event validation as the Kubernetes API server does it (`pkg/apis/core/validation/events.go`
 * and the generic create/update steps of `apiserver/pkg/registry/rest`). It works on the
 * stored core/v1 form: an events.k8s.io/v1 request is converted before it is validated,
 * so error paths use core field names for both APIs. The request's API selects the mode:
 * core/v1 is legacy (lenient), events.k8s.io/v1 is strict.
 */
import { utf8ByteLength } from './utf8.js';
import { isDNS1123Subdomain, isQualifiedName, nameIsDNSSubdomain, validatePathSegmentName } from './names.js';
import {
  FIELD_IMMUTABLE_ERROR_MSG,
  fieldInvalid,
  fieldRequired,
  goTimeJSON,
  isZeroTime,
  timeKey,
  validateKubeFinalizerNames,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './object-meta.js';
import { newInvalid, type FieldError, type StatusError } from './status.js';
import type { CoreEvent, EventApi, EventSource, ObjectReference } from './types.js';

/** REPORTING_INSTANCE_LENGTH_LIMIT is the most bytes reportingInstance may have. */
export const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
/** ACTION_LENGTH_LIMIT is the most bytes action may have. */
export const ACTION_LENGTH_LIMIT = 128;
/** REASON_LENGTH_LIMIT is the most bytes reason may have. */
export const REASON_LENGTH_LIMIT = 128;
/** NOTE_LENGTH_LIMIT is the most bytes message (note) may have. */
export const NOTE_LENGTH_LIMIT = 1024;

const byteLength = utf8ByteLength;

/** isLegacyEventApi tells whether a request API gets only legacy validation (core/v1). */
export function isLegacyEventApi(api: EventApi): boolean {
  return api === 'v1';
}

/**
 * legacyValidateEvent runs on every create and update through either API. An event
 * without eventTime only needs its namespace to agree with involvedObject's; one with
 * eventTime needs the reporting fields, action and reason, within byte limits.
 */
function legacyValidateEvent(event: CoreEvent, api: EventApi): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = event.metadata.namespace ?? '';
  const ioNamespace = event.involvedObject?.namespace ?? '';
  // The core API calls reportingController reportingComponent, and its errors say so.
  const controllerPath = api === 'v1' ? 'reportingComponent' : 'reportingController';

  if (isZeroTime(event.eventTime)) {
    const agrees = ioNamespace === '' ? namespace === '' || namespace === 'default' : namespace === ioNamespace;
    if (!agrees) errs.push(fieldInvalid('involvedObject.namespace', ioNamespace, 'does not match event.namespace'));
  } else {
    // A new-style event may live in another namespace than its object; only a
    // cluster-scoped object (empty namespace) pins it to default or kube-system.
    if (ioNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') {
      errs.push(fieldInvalid('involvedObject.namespace', ioNamespace, 'does not match event.namespace'));
    }
    const controller = event.reportingComponent ?? '';
    if (controller === '') errs.push(fieldRequired(controllerPath));
    for (const msg of isQualifiedName(controller)) errs.push(fieldInvalid(controllerPath, controller, msg));
    errs.push(...requiredWithLimit('reportingInstance', event.reportingInstance, REPORTING_INSTANCE_LENGTH_LIMIT));
    errs.push(...requiredWithLimit('action', event.action, ACTION_LENGTH_LIMIT));
    errs.push(...requiredWithLimit('reason', event.reason, REASON_LENGTH_LIMIT));
    if (byteLength(event.message ?? '') > NOTE_LENGTH_LIMIT) errs.push(tooManyCharacters('message', NOTE_LENGTH_LIMIT));
  }

  for (const msg of isDNS1123Subdomain(namespace, 'bytes')) errs.push(fieldInvalid('namespace', namespace, msg));
  return errs;
}

function requiredWithLimit(field: string, value: string | undefined, limit: number): FieldError[] {
  const errs: FieldError[] = [];
  const v = value ?? '';
  if (v === '') errs.push(fieldRequired(field));
  if (byteLength(v) > limit) errs.push(tooManyCharacters(field, limit));
  return errs;
}

// Upstream reports the length errors with an empty bad value, not the offending text.
const tooManyCharacters = (field: string, limit: number): FieldError =>
  fieldInvalid(field, '', `can have at most ${limit} characters`);

function validateSeries(event: CoreEvent): FieldError[] {
  const errs: FieldError[] = [];
  const series = event.series;
  if (series == null) return errs;
  if ((series.count ?? 0) < 2) errs.push(fieldInvalid('series.count', '', 'should be at least 2'));
  if (isZeroTime(series.lastObservedTime)) errs.push(fieldRequired('series.lastObservedTime'));
  return errs;
}

/**
 * validateEventCreate is the event strategy's create validation (ValidateEventCreate).
 * Legacy checks always run; events.k8s.io/v1 adds full ObjectMeta validation with
 * DNS-subdomain names, series, a required eventTime, type Normal|Warning, and unset
 * deprecated fields.
 */
export function validateEventCreate(event: CoreEvent, api: EventApi): FieldError[] {
  const errs = legacyValidateEvent(event, api);
  if (isLegacyEventApi(api)) return errs;

  errs.push(...validateObjectMeta(event.metadata, nameIsDNSSubdomain));
  errs.push(...validateKubeFinalizerNames(event.metadata.finalizers));
  errs.push(...validateSeries(event));
  if (isZeroTime(event.eventTime)) errs.push(fieldRequired('eventTime'));
  const type = event.type ?? '';
  if (type !== 'Normal' && type !== 'Warning') errs.push(fieldInvalid('type', '', `has invalid value: ${type}`));
  if (!isZeroTime(event.firstTimestamp)) errs.push(fieldInvalid('firstTimestamp', '', 'needs to be unset'));
  if (!isZeroTime(event.lastTimestamp)) errs.push(fieldInvalid('lastTimestamp', '', 'needs to be unset'));
  if ((event.count ?? 0) !== 0) errs.push(fieldInvalid('count', '', 'needs to be unset'));
  if ((event.source?.component ?? '') !== '' || (event.source?.host ?? '') !== '') {
    errs.push(fieldInvalid('source', '', 'needs to be unset'));
  }
  return errs;
}

/** goObjectReference is the internal core.ObjectReference as Go's encoder prints it (no JSON tags). */
function goObjectReference(r: ObjectReference | null | undefined): Record<string, string> {
  return {
    Kind: r?.kind ?? '',
    Namespace: r?.namespace ?? '',
    Name: r?.name ?? '',
    UID: r?.uid ?? '',
    APIVersion: r?.apiVersion ?? '',
    ResourceVersion: r?.resourceVersion ?? '',
    FieldPath: r?.fieldPath ?? '',
  };
}

function goEventSource(s: EventSource | undefined): Record<string, string> {
  return { Component: s?.component ?? '', Host: s?.host ?? '' };
}

function seriesEqual(a: CoreEvent['series'], b: CoreEvent['series']): boolean {
  if (a == null || b == null) return a == null && b == null;
  return (a.count ?? 0) === (b.count ?? 0) && timeKey(a.lastObservedTime) === timeKey(b.lastObservedTime);
}

/**
 * validateEventUpdate is the event strategy's update validation (ValidateEventUpdate).
 * Through core/v1 only the legacy checks run on the new object, so anything may change.
 * Through events.k8s.io/v1 the ObjectMeta update rules apply, a changed series is
 * re-checked, and every other field is immutable (`reason` is checked twice upstream,
 * so its cause can appear twice).
 */
export function validateEventUpdate(next: CoreEvent, prev: CoreEvent, api: EventApi): FieldError[] {
  const errs = legacyValidateEvent(next, api);
  if (isLegacyEventApi(api)) return errs;

  errs.push(...validateObjectMetaUpdate(next.metadata, prev.metadata));
  errs.push(...validateKubeFinalizerNames(next.metadata.finalizers));
  if (!seriesEqual(next.series, prev.series)) errs.push(...validateSeries(next));

  const immutable = (field: string, changed: boolean, value: unknown): void => {
    if (changed) errs.push(fieldInvalid(field, value, FIELD_IMMUTABLE_ERROR_MSG));
  };
  const str = (field: string, a: string | undefined, b: string | undefined): void => immutable(field, (a ?? '') !== (b ?? ''), a ?? '');
  const ref = (field: string, a: ObjectReference | null | undefined, b: ObjectReference | null | undefined, pointer: boolean): void => {
    const aJSON = goObjectReference(a);
    const nilDiffers = pointer && (a == null) !== (b == null);
    const changed = nilDiffers || JSON.stringify(aJSON) !== JSON.stringify(goObjectReference(b));
    immutable(field, changed, pointer && a == null ? null : aJSON);
  };
  const time = (field: string, a: string | null | undefined, b: string | null | undefined): void =>
    immutable(field, timeKey(a) !== timeKey(b), goTimeJSON(a, 'second'));

  ref('involvedObject', next.involvedObject, prev.involvedObject, false);
  str('reason', next.reason, prev.reason);
  str('message', next.message, prev.message);
  const source = goEventSource(next.source);
  immutable('source', JSON.stringify(source) !== JSON.stringify(goEventSource(prev.source)), source);
  time('firstTimestamp', next.firstTimestamp, prev.firstTimestamp);
  time('lastTimestamp', next.lastTimestamp, prev.lastTimestamp);
  immutable('count', (next.count ?? 0) !== (prev.count ?? 0), next.count ?? 0);
  str('reason', next.reason, prev.reason);
  str('type', next.type, prev.type);
  // Sub-microsecond differences are tolerated: clients may round-trip eventTime through microsecond encodings.
  immutable('eventTime', timeKey(next.eventTime, 'micro') !== timeKey(prev.eventTime, 'micro'), goTimeJSON(next.eventTime, 'micro'));
  str('action', next.action, prev.action);
  ref('related', next.related, prev.related, true);
  str('reportingController', next.reportingComponent, prev.reportingComponent);
  str('reportingInstance', next.reportingInstance, prev.reportingInstance);
  return errs;
}

/**
 * validateGenericCreateMeta is the apiserver's own ObjectMeta check on create, with
 * path-segment name rules. It runs only after the strategy's validation passed.
 */
export function validateGenericCreateMeta(event: CoreEvent): FieldError[] {
  return validateObjectMeta(event.metadata, validatePathSegmentName);
}

/**
 * validateGenericUpdateMeta is the apiserver's common-field check on update (both
 * APIs): ObjectMeta with path-segment names, then the ObjectMeta update rules. It runs
 * before the strategy's validation and its errors come first.
 */
export function validateGenericUpdateMeta(next: CoreEvent, prev: CoreEvent): FieldError[] {
  return [...validateObjectMeta(next.metadata, validatePathSegmentName), ...validateObjectMetaUpdate(next.metadata, prev.metadata)];
}

/**
 * validateEventCreateRequest is everything the apiserver validates on an event create,
 * in its order: the strategy first and, only if that passed, the generic ObjectMeta
 * check. The name must already be generated and the namespace reconciled with the URL.
 */
export function validateEventCreateRequest(event: CoreEvent, api: EventApi): FieldError[] {
  const errs = validateEventCreate(event, api);
  return errs.length > 0 ? errs : validateGenericCreateMeta(event);
}

/**
 * validateEventUpdateRequest is everything the apiserver validates on an event update:
 * generic common fields, then the strategy. `next.metadata` should have been through
 * prepareObjectMetaUpdate and carry a resourceVersion (the stored one for an
 * unconditional update).
 */
export function validateEventUpdateRequest(next: CoreEvent, prev: CoreEvent, api: EventApi): FieldError[] {
  return [...validateGenericUpdateMeta(next, prev), ...validateEventUpdate(next, prev, api)];
}

/**
 * eventInvalidError is the 422 for failed event validation. Both APIs answer with
 * kind `Event` in the core group: `Event "<name>" is invalid: …`.
 */
export function eventInvalidError(name: string, errs: FieldError[]): StatusError {
  return newInvalid({ group: '', kind: 'Event' }, name, errs);
}
