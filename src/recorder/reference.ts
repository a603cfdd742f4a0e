import type { ObjectReference } from '../api/index.js';
import type { Referent } from './types.js';

const refFields = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'] as const;

/**
 * getReference turns an object or a reference into an ObjectReference, as
 * client-go's `GetReference` does: an object needs its kind and apiVersion
 * (without a scheme there is nowhere else to look them up). Empty fields are left
 * out, as Go's `omitempty` does.
 */
export function getReference(referent: Referent | null | undefined): ObjectReference | Error {
  if (referent === null || referent === undefined || typeof referent !== 'object') {
    return new Error("can't reference a nil object");
  }
  const meta = (referent as { metadata?: unknown }).metadata;
  const ref: ObjectReference = {};
  if (typeof meta === 'object' && meta !== null) {
    const obj = referent as { apiVersion?: string; kind?: string; metadata: Record<string, unknown> };
    if (!obj.kind || !obj.apiVersion) {
      return new Error('object has no kind or apiVersion (objects read from a list lack them): set them or pass an ObjectReference');
    }
    ref.kind = obj.kind;
    const m = obj.metadata;
    if (typeof m.namespace === 'string' && m.namespace !== '') ref.namespace = m.namespace;
    if (typeof m.name === 'string' && m.name !== '') ref.name = m.name;
    if (typeof m.uid === 'string' && m.uid !== '') ref.uid = m.uid;
    ref.apiVersion = obj.apiVersion;
    if (typeof m.resourceVersion === 'string' && m.resourceVersion !== '') ref.resourceVersion = m.resourceVersion;
    return ref;
  }
  const src = referent as Record<string, unknown>;
  for (const f of refFields) {
    const v = src[f];
    if (typeof v === 'string' && v !== '') ref[f] = v;
  }
  return ref;
}

/** referenceKey is a string that is equal for two references exactly when every field is. */
export function referenceKey(ref: ObjectReference | null | undefined): string {
  if (!ref) return '';
  return `${ref.kind ?? ''}\u0000${ref.namespace ?? ''}\u0000${ref.name ?? ''}\u0000${ref.uid ?? ''}\u0000${ref.apiVersion ?? ''}\u0000${ref.resourceVersion ?? ''}\u0000${ref.fieldPath ?? ''}`;
}
