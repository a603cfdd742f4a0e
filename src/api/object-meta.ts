import { utf8ByteLength } from './utf8.js';
/**
 * ObjectMeta validation as apimachinery `pkg/api/validation/objectmeta.go` does it,
 * plus the field-error constructors and the Go time encodings the event rules share.
 */
import { isQualifiedName, isValidLabelValue, nameIsDNSLabel, type NameValidator } from './names.js';
import type { FieldError } from './status.js';
import type { ManagedFieldsEntry, ObjectMeta, OwnerReference } from './types.js';

/** fieldRequired is field.Required: `<path>: Required value[: detail]`. */
export function fieldRequired(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, detail };
}

/** fieldInvalid is field.Invalid: `<path>: Invalid value: <value>[: detail]`. */
export function fieldInvalid(field: string, badValue: unknown, detail = ''): FieldError {
  return { type: 'FieldValueInvalid', field, badValue: badValue ?? null, detail };
}

/** fieldForbidden is field.Forbidden: `<path>: Forbidden: detail`. */
export function fieldForbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

/** fieldTooLong is field.TooLong: `<path>: Too long: may not be more than <n> bytes`. */
export function fieldTooLong(field: string, maxLength: number): FieldError {
  const detail = maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return { type: 'FieldValueTooLong', field, detail };
}

/** fieldNotSupported is field.NotSupported: `<path>: Unsupported value: <value>: supported values: "a", "b"`. */
export function fieldNotSupported(field: string, badValue: unknown, valid: string[]): FieldError {
  const detail = valid.length > 0 ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return { type: 'FieldValueNotSupported', field, badValue, detail };
}

/** FIELD_IMMUTABLE_ERROR_MSG is apimachinery's FieldImmutableErrorMsg. */
export const FIELD_IMMUTABLE_ERROR_MSG = 'field is immutable';

/** TOTAL_ANNOTATION_SIZE_LIMIT_BYTES is the cap on the summed bytes of annotation keys and values (256 KiB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

/** FIELD_MANAGER_MAX_LENGTH is the longest managedFields manager name (bytes). */
export const FIELD_MANAGER_MAX_LENGTH = 128;

const MAX_SUBRESOURCE_NAME_LENGTH = 256;
const FINALIZER_ORPHAN_DEPENDENTS = 'orphan';
const FINALIZER_DELETE_DEPENDENTS = 'foregroundDeletion';
const STANDARD_FINALIZERS = new Set(['kubernetes', FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS]);

const byteLength = utf8ByteLength;

// ---------------------------------------------------------------------------
// Go time values. A metav1.Time / MicroTime on the wire is an RFC 3339 string or null;
// Go compares the instants (nanosecond precision) and prints them back in UTC.

const ZERO_TIME_NS = -62135596800n * 1_000_000_000n; // 0001-01-01T00:00:00Z, Go's zero time
const rfc3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/** TimePrecision picks metav1.Time (seconds) or metav1.MicroTime (microseconds). */
export type TimePrecision = 'second' | 'micro';

function parseInstant(t: string): bigint | undefined {
  const m = rfc3339.exec(t);
  if (m === null) return undefined;
  const ms = Date.parse(`${m[1]!}T${m[2]!}${m[4]!.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  const frac = (m[3] ?? '').slice(0, 9).padEnd(9, '0');
  return BigInt(ms) * 1_000_000n + BigInt(frac);
}

/**
 * isZeroTime tells whether a wire time is Go's zero time: absent, null, empty, or
 * 0001-01-01T00:00:00Z.
 */
export function isZeroTime(t: string | null | undefined): boolean {
  if (t === undefined || t === null || t === '') return true;
  return parseInstant(t) === ZERO_TIME_NS;
}

/**
 * timeKey is a comparison key for a wire time: equal keys mean equal instants at the
 * given truncation. Unparseable text compares as itself.
 */
export function timeKey(t: string | null | undefined, truncateTo: 'nano' | TimePrecision = 'nano'): string {
  if (isZeroTime(t)) return 'zero';
  const ns = parseInstant(t!);
  if (ns === undefined) return `raw:${t!}`;
  const unit = truncateTo === 'nano' ? 1n : truncateTo === 'micro' ? 1000n : 1_000_000_000n;
  return String(floorDiv(ns, unit) * unit);
}

/**
 * goTimeJSON is what Go's json.Marshal prints for a metav1.Time (`second`) or
 * metav1.MicroTime (`micro`): null for the zero time, else UTC RFC 3339.
 */
export function goTimeJSON(t: string | null | undefined, precision: TimePrecision): string | null {
  if (isZeroTime(t)) return null;
  const ns = parseInstant(t!);
  if (ns === undefined) return t!;
  const secs = floorDiv(ns, 1_000_000_000n);
  const base = new Date(Number(secs) * 1000).toISOString().slice(0, 19);
  if (precision === 'second') return `${base}Z`;
  const micros = (ns - secs * 1_000_000_000n) / 1000n;
  return `${base}.${String(micros).padStart(6, '0')}Z`;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

// ---------------------------------------------------------------------------

/**
 * validateObjectMeta is apimachinery's ValidateObjectMetaAccessor for a namespaced
 * object: generateName and name by `nameFn`, namespace as a DNS label, generation,
 * labels, annotations, ownerReferences, finalizers and managedFields.
 */
export function validateObjectMeta(meta: ObjectMeta, nameFn: NameValidator, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = meta.generateName ?? '';
  if (generateName !== '') {
    for (const msg of nameFn(generateName, true)) errs.push(fieldInvalid(`${path}.generateName`, generateName, msg));
  }
  const name = meta.name ?? '';
  if (name === '') errs.push(fieldRequired(`${path}.name`, 'name or generateName is required'));
  else for (const msg of nameFn(name, false)) errs.push(fieldInvalid(`${path}.name`, name, msg));

  const namespace = meta.namespace ?? '';
  if (namespace === '') errs.push(fieldRequired(`${path}.namespace`));
  else for (const msg of nameIsDNSLabel(namespace, false)) errs.push(fieldInvalid(`${path}.namespace`, namespace, msg));

  errs.push(...validateNonnegative(meta.generation ?? 0, `${path}.generation`));
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  errs.push(...validateOwnerReferences(meta.ownerReferences, `${path}.ownerReferences`));
  errs.push(...validateFinalizers(meta.finalizers, `${path}.finalizers`));
  errs.push(...validateManagedFields(meta.managedFields, `${path}.managedFields`));
  return errs;
}

/**
 * validateObjectMetaUpdate is apimachinery's ValidateObjectMetaAccessorUpdate. It
 * expects `next` to have been through prepareObjectMetaUpdate, and, for an update sent
 * without a resourceVersion, to carry the stored one already (as the registry does).
 */
export function validateObjectMetaUpdate(next: ObjectMeta, prev: ObjectMeta, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  if (!isZeroTime(prev.deletionTimestamp)) {
    const old = new Set(prev.finalizers ?? []);
    const extra = [...new Set((next.finalizers ?? []).filter((f) => !old.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        fieldForbidden(
          `${path}.finalizers`,
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  if ((next.resourceVersion ?? '') === '') {
    errs.push(fieldInvalid(`${path}.resourceVersion`, next.resourceVersion ?? '', 'must be specified for an update'));
  }
  const generation = next.generation ?? 0;
  errs.push(...validateNonnegative(generation, `${path}.generation`));
  if (generation < (prev.generation ?? 0)) errs.push(fieldInvalid(`${path}.generation`, generation, 'must not be decremented'));

  const immutable = (field: string, changed: boolean, value: unknown): void => {
    if (changed) errs.push(fieldInvalid(`${path}.${field}`, value, FIELD_IMMUTABLE_ERROR_MSG));
  };
  immutable('name', (next.name ?? '') !== (prev.name ?? ''), next.name ?? '');
  immutable('namespace', (next.namespace ?? '') !== (prev.namespace ?? ''), next.namespace ?? '');
  immutable('uid', (next.uid ?? '') !== (prev.uid ?? ''), next.uid ?? '');
  immutable(
    'creationTimestamp',
    timeKey(next.creationTimestamp) !== timeKey(prev.creationTimestamp),
    goTimeJSON(next.creationTimestamp, 'second'),
  );
  // deletionTimestamp is a pointer upstream: absent and zero are not the same.
  const nextDel = next.deletionTimestamp ?? null;
  const prevDel = prev.deletionTimestamp ?? null;
  immutable(
    'deletionTimestamp',
    (nextDel === null) !== (prevDel === null) || timeKey(nextDel) !== timeKey(prevDel),
    nextDel === null ? null : goTimeJSON(nextDel, 'second'),
  );
  immutable(
    'deletionGracePeriodSeconds',
    (next.deletionGracePeriodSeconds ?? null) !== (prev.deletionGracePeriodSeconds ?? null),
    next.deletionGracePeriodSeconds ?? null,
  );

  errs.push(...validateLabels(next.labels, `${path}.labels`));
  errs.push(...validateAnnotations(next.annotations, `${path}.annotations`));
  errs.push(...validateOwnerReferences(next.ownerReferences, `${path}.ownerReferences`));
  errs.push(...validateManagedFields(next.managedFields, `${path}.managedFields`));
  return errs;
}

/**
 * prepareObjectMetaUpdate applies what the apiserver does to an update's metadata
 * before validating it (rest.BeforeUpdate): generation, creationTimestamp and a set
 * deletionTimestamp come from the stored object, and an absent uid or grace period
 * is taken from it.
 */
export function prepareObjectMetaUpdate(next: ObjectMeta, prev: ObjectMeta): ObjectMeta {
  const out: ObjectMeta = { ...next };
  if (prev.generation !== undefined && prev.generation !== 0) out.generation = prev.generation;
  else delete out.generation;
  if ((out.uid ?? '') === '' && prev.uid !== undefined) out.uid = prev.uid;
  if (!isZeroTime(prev.creationTimestamp)) out.creationTimestamp = prev.creationTimestamp ?? null;
  if (!isZeroTime(prev.deletionTimestamp)) out.deletionTimestamp = prev.deletionTimestamp ?? null;
  if (prev.deletionGracePeriodSeconds != null && out.deletionGracePeriodSeconds == null) {
    out.deletionGracePeriodSeconds = prev.deletionGracePeriodSeconds;
  }
  return out;
}

/**
 * validateKubeFinalizerNames is the extra finalizer rule of core's ObjectMeta
 * validation (strict-mode events only): a name without `/` must be a standard one.
 */
export function validateKubeFinalizerNames(finalizers: string[] | undefined, path = 'metadata.finalizers'): FieldError[] {
  const errs: FieldError[] = [];
  (finalizers ?? []).forEach((f, i) => {
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      errs.push(fieldInvalid(`${path}[${i}]`, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

function validateNonnegative(value: number, field: string): FieldError[] {
  return value < 0 ? [fieldInvalid(field, value, 'must be greater than or equal to 0')] : [];
}

function validateLabels(labels: Record<string, string> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const msg of isQualifiedName(k)) errs.push(fieldInvalid(field, k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(fieldInvalid(field, v, msg));
  }
  return errs;
}

function validateAnnotations(annotations: Record<string, string> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    // Annotation keys are qualified names except that case does not matter.
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(fieldInvalid(field, k, msg));
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) errs.push(fieldTooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return errs;
}

function parseGroupVersion(gv: string): { group: string; version: string } | undefined {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return undefined;
}

/** ownerReferenceJSON orders an OwnerReference's fields as Go's encoder does. */
function ownerReferenceJSON(r: OwnerReference): Record<string, unknown> {
  const o: Record<string, unknown> = { apiVersion: r.apiVersion ?? '', kind: r.kind ?? '', name: r.name ?? '', uid: r.uid ?? '' };
  if (r.controller != null) o.controller = r.controller;
  if (r.blockOwnerDeletion != null) o.blockOwnerDeletion = r.blockOwnerDeletion;
  return o;
}

function validateOwnerReferences(refs: OwnerReference[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  (refs ?? []).forEach((ref, i) => {
    const p = `${field}[${i}]`;
    const apiVersion = ref.apiVersion ?? '';
    const gv = parseGroupVersion(apiVersion);
    if (apiVersion === '') errs.push(fieldRequired(`${p}.apiVersion`, 'must not be empty'));
    else if (gv === undefined || gv.version === '') {
      errs.push(fieldInvalid(`${p}.apiVersion`, apiVersion, 'must be <group>/<version> or <version>'));
    }
    if ((ref.kind ?? '') === '') errs.push(fieldRequired(`${p}.kind`, 'must not be empty'));
    if ((ref.name ?? '') === '') errs.push(fieldRequired(`${p}.name`, 'must not be empty'));
    if ((ref.uid ?? '') === '') errs.push(fieldRequired(`${p}.uid`, 'must not be empty'));
    // BannedOwners: a core/v1 Event may not own anything.
    const g = gv ?? { group: '', version: '' };
    if (g.group === '' && g.version === 'v1' && ref.kind === 'Event') {
      errs.push(fieldInvalid(p, ownerReferenceJSON(ref), `${g.group}/${g.version}, Kind=${ref.kind} is disallowed from being an owner`));
    }
    if (ref.controller === true) {
      const current = `${ref.kind ?? ''}/${ref.name ?? ''}`;
      if (firstController !== '') {
        errs.push(
          fieldInvalid(
            field,
            (refs ?? []).map(ownerReferenceJSON),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  });
  return errs;
}

function validateFinalizers(finalizers: string[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = finalizers ?? [];
  for (const f of list) for (const msg of isQualifiedName(f)) errs.push(fieldInvalid(field, f, msg));
  if (list.includes(FINALIZER_ORPHAN_DEPENDENTS) && list.includes(FINALIZER_DELETE_DEPENDENTS)) {
    errs.push(fieldInvalid(field, list, `finalizer ${FINALIZER_ORPHAN_DEPENDENTS} and ${FINALIZER_DELETE_DEPENDENTS} cannot be both set`));
  }
  return errs;
}

const goGraphic = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function validateManagedFields(entries: ManagedFieldsEntry[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  (entries ?? []).forEach((e, i) => {
    const p = `${field}[${i}]`;
    const op = e.operation ?? '';
    if (op === '') errs.push(fieldRequired(`${p}.operation`, 'must not be empty'));
    else if (op !== 'Apply' && op !== 'Update') errs.push(fieldNotSupported(`${p}.operation`, op, ['Apply', 'Update']));
    if ((e.fieldsType ?? '') !== '' && e.fieldsType !== 'FieldsV1') {
      errs.push(fieldInvalid(`${p}.fieldsType`, e.fieldsType, 'must be `FieldsV1`'));
    }
    const manager = e.manager ?? '';
    if (byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) errs.push(fieldTooLong(`${p}.manager`, FIELD_MANAGER_MAX_LENGTH));
    let pos = 0;
    for (const ch of manager) {
      const cp = ch.codePointAt(0)!;
      if (!goGraphic.test(ch) || (cp >= 0xd800 && cp <= 0xdfff)) {
        const hex = cp.toString(16).toUpperCase().padStart(4, '0');
        errs.push(fieldInvalid(`${p}.manager`, manager, `invalid character U+${hex} (at position ${pos})`));
      }
      pos += byteLength(ch);
    }
    if (byteLength(e.subresource ?? '') > MAX_SUBRESOURCE_NAME_LENGTH) {
      errs.push(fieldTooLong(`${p}.subresource`, MAX_SUBRESOURCE_NAME_LENGTH));
    }
  });
  return errs;
}
