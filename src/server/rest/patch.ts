import type * as FastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { failureStatus, newBadRequest, StatusError } from '../../api/index.js';
import { requireCjs } from '../../internal/index.js';

// JSON patch is the rarest patch type; its library loads on first use.
let jsonPatchModule: typeof FastJsonPatch | undefined;
function jsonPatch(): typeof FastJsonPatch {
  jsonPatchModule ??= requireCjs('fast-json-patch') as typeof FastJsonPatch;
  return jsonPatchModule;
}

/** PatchType is a patch format the server accepts, by its Content-Type. */
export type PatchType = 'json' | 'merge' | 'strategic';

const PATCH_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
};

/** patchTypeOf maps a PATCH request's Content-Type to its patch type, or answers 415. */
export function patchTypeOf(contentType: string): PatchType {
  const t = PATCH_TYPES[contentType];
  if (t === undefined) {
    // kube-apiserver's router refuses a PATCH it has no route for before any handler runs, in go-restful's words.
    throw new StatusError(failureStatus(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {}));
  }
  return t;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** applyPatch applies a patch document (already parsed JSON) to `original` and returns the result. */
export function applyPatch(type: PatchType, original: unknown, patch: unknown): unknown {
  switch (type) {
    case 'json':
      return applyJsonPatch(original, patch);
    case 'merge':
      if (!isObject(patch)) throw newBadRequest('json: cannot unmarshal into a merge patch: the patch must be a JSON object');
      return mergePatch(original as Json, patch);
    case 'strategic':
      if (!isObject(patch)) throw newBadRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
      return strategicMergePatch(original as Json, patch, []);
  }
}

function applyJsonPatch(original: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) {
    throw newBadRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  const copy = structuredClone(original);
  try {
    refuseMoveIntoChild(patch);
    const result = jsonPatch().applyPatch(copy, patch as Operation[], true, true);
    // A copy or move from a pointer that names nothing leaves no document at all (the library does not refuse it).
    if (result.newDocument === undefined) throw new Error('the patch leaves no object');
    return result.newDocument;
  } catch (e) {
    // A failed `test` operation is upstream's bare 422; other failures say what went wrong.
    const failedTest = (e as { name?: unknown }).name === 'TEST_OPERATION_FAILED';
    const message = e instanceof Error ? e.message.split('\n')[0]! : String(e);
    const text = failedTest ? 'the server rejected our request due to an error in our request' : `the server rejected our request due to an error in our request: ${message}`;
    throw new StatusError(failureStatus(422, 'Invalid', text, {}));
  }
}

/**
 * refuseMoveIntoChild refuses what RFC 6902 (4.4) forbids and the library does not check:
 * a `move` whose `from` is a proper prefix of its `path` would nest the document in itself.
 */
function refuseMoveIntoChild(patch: unknown[]): void {
  for (const op of patch) {
    if (!isObject(op) || op.op !== 'move' || typeof op.from !== 'string' || typeof op.path !== 'string') continue;
    if (op.path.startsWith(`${op.from}/`)) throw new Error(`cannot move ${JSON.stringify(op.from)} into its own child ${JSON.stringify(op.path)}`);
  }
}

/** mergePatch is RFC 7386 JSON merge patch. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k] ?? null, v);
  }
  return out;
}

/**
 * Lists in an Event that strategic merge patch merges by key (`$set`: as a set) rather than
 * replaces (from the Go struct tags of ObjectMeta); every other list is replaced.
 */
const MERGE_KEYS: Record<string, string> = {
  'metadata.ownerReferences': 'uid',
  'metadata.finalizers': '$set',
};

/**
 * strategicMergePatch applies a strategic merge patch to an Event. Events hold
 * no lists of their own, so it is a merge patch plus the `$patch`, `$retainKeys`,
 * `$setElementOrder` and `$deleteFromPrimitiveList` directives and the two merged
 * lists of ObjectMeta.
 */
export function strategicMergePatch(target: Json, patch: JsonObject, path: string[]): Json {
  const directive = patch.$patch;
  if (directive === 'replace') {
    const rest = { ...patch };
    delete rest.$patch;
    return rest;
  }
  if (directive === 'delete') return null;
  if (directive !== undefined) throw newBadRequest(`Unknown patch type: ${JSON.stringify(directive)} in map: ${JSON.stringify(patch)}`);
  let out: JsonObject = isObject(target) ? { ...target } : {};
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) {
    const keep = new Set(retain.filter((k): k is string => typeof k === 'string'));
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.includes(x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const childPath = [...path, k];
    const mergeKey = MERGE_KEYS[childPath.join('.')];
    if (Array.isArray(v) && mergeKey !== undefined) {
      out[k] = mergeList(out[k], v, mergeKey);
    } else if (isObject(v)) {
      const next = strategicMergePatch(out[k] ?? null, v, childPath);
      if (next === null) delete out[k];
      else out[k] = next;
    } else {
      out[k] = v;
    }
  }
  return out;
}

function mergeList(current: Json | undefined, patch: Json[], key: string): Json[] {
  const base = Array.isArray(current) ? [...current] : [];
  if (key === '$set') {
    for (const item of patch) if (!base.includes(item)) base.push(item);
    return base;
  }
  for (const item of patch) {
    if (!isObject(item)) continue;
    const idx = base.findIndex((b) => isObject(b) && b[key] === item[key]);
    if (item.$patch === 'delete') {
      if (idx >= 0) base.splice(idx, 1);
    } else if (idx >= 0) {
      base[idx] = strategicMergePatch(base[idx]!, item, []);
    } else {
      base.push(item);
    }
  }
  return base;
}
