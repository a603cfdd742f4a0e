/**
 * Reading a body's kind and apiVersion as apimachinery's meta factory does (case-insensitive keys,
 * last one wins), resolving them against the URL's, decoding into the selected Go struct, and
 * wrapping every failure as the create handler does (`transformDecodeError`); a body of another API
 * version is refused after decoding.
 */
import { encodeCoreEvent, toCoreV1 } from './conversion.js';
import { goQuote } from './label-selector.js';
import { newBadRequest } from './status.js';
import type { StatusError } from './status.js';
import type { CoreEvent, EventApi } from './types.js';
import { jsonKind, utf8Decoder } from './decode-json.js';
import type { JNode } from './decode-json.js';
import { gvString, schemaFor } from './decode-schemas.js';
import type { GroupVersionKind, Schema } from './decode-schemas.js';
import { FatalDecodeError, decodeInto, zeroOf } from './decode-struct.js';
import type { DecodeState } from './decode-struct.js';

/** FieldValidation is the `fieldValidation` query parameter of create/update/patch (empty means Warn). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** DecodeOptions tune decodeEvent. */
export interface DecodeOptions {
  /** fieldValidation defaults to Warn, the apiserver's default. */
  fieldValidation?: FieldValidation;
}

/** DecodedEvent is a body read into the stored form, with the warnings to send as `Warning: 299 - "..."` headers. */
export interface DecodedEvent {
  event: CoreEvent;
  warnings: string[];
}

const INTERPRET_STRUCT =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** foldEquals is encoding/json's case-insensitive key match for the ASCII names apiVersion and kind. */
export function foldEquals(key: string, name: string): boolean {
  if (key === name) return true;
  // The two folds below map one UTF-16 unit to one, so a key of another length never matches.
  if (key.length !== name.length) return false;
  // A first unit that is neither a fold nor the name's first letter in either case cannot match: most keys end here,
  // before the copies below (a body's `type` is as long as `kind`).
  const c = key.charCodeAt(0);
  if (c !== 0x212a && c !== 0x17f && (c | 0x20) !== (name.charCodeAt(0) | 0x20)) return false;
  const folded = key.replace(/\u212a/g, 'k').replace(/\u017f/g, 's');
  return folded.length === name.length && folded.toLowerCase() === name.toLowerCase() && /^[\x00-\x7f]*$/.test(folded);
}

/** interpret is apimachinery's SimpleMetaFactory.Interpret: kind and apiVersion read with the standard library decoder. */
function interpret(root: JNode): { apiVersion: string; kind: string } {
  const found = { apiVersion: '', kind: '' };
  if (root.t === 'null') return found;
  if (root.t !== 'object') {
    throw new Error(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(root)} into Go value of type ${INTERPRET_STRUCT}`);
  }
  let firstError: string | null = null;
  for (const [key, child] of root.entries) {
    const name = foldEquals(key, 'apiVersion') ? 'apiVersion' : foldEquals(key, 'kind') ? 'kind' : undefined;
    if (name === undefined || child.t === 'null') continue;
    if (child.t === 'string') found[name] = child.v;
    else firstError ??= `json: cannot unmarshal ${jsonKind(child)} into Go struct field .${name} of type string`;
  }
  if (firstError !== null) throw new Error(`couldn't get version/kind; json parse error: ${firstError}`);
  return found;
}

/** parseGroupVersion is schema.ParseGroupVersion. */
function parseGroupVersion(gv: string): { group: string; version: string } {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  throw new Error(`unexpected GroupVersion string: ${gv}`);
}

function urlGvk(api: EventApi): GroupVersionKind {
  return api === 'v1' ? { group: '', version: 'v1', kind: 'Event' } : { group: 'events.k8s.io', version: 'v1', kind: 'Event' };
}

/** summarizeData is the apiserver's 30-byte preview of a body it could not recognise. */
function summarizeData(data: Uint8Array): string {
  const max = 30;
  if (data.length === 0) return '<empty>';
  const part = data.length > max ? data.subarray(0, max) : data;
  const suffix = data.length > max ? ' ...' : '';
  if (data[0] === 0x7b) return utf8Decoder.decode(part) + suffix;
  let hex = '';
  for (const c of part) hex += c.toString(16).padStart(2, '0');
  return hex + suffix;
}

/** unrecognized is the 400 for a body whose kind and apiVersion cannot be read. */
export function unrecognized(err: string, body: Uint8Array): StatusError {
  return newBadRequest(`the object provided is unrecognized (must be of type Event): ${err} (${summarizeData(body)})`);
}

function cannotHandle(gvk: GroupVersionKind, err: string): StatusError {
  return newBadRequest(`${gvk.kind} in version ${goQuote(gvk.version)} cannot be handled as a Event: ${err}`);
}

/** utf8Encoder encodes text bodies to the bytes the decoder reads. */
export const utf8Encoder = new TextEncoder();

/** Target is the Go type a body decodes into: its group/version/kind, its schema, and the URL's group/version/kind. */
export interface Target {
  gvk: GroupVersionKind;
  schema: Schema;
  expected: GroupVersionKind;
}

/** target resolves the kind and apiVersion a body gives (`found`) against the URL's, as the apiserver's decoder does. */
export function target(found: { apiVersion: string; kind: string }, body: Uint8Array, api: EventApi): Target {
  let gv: { group: string; version: string };
  try {
    gv = parseGroupVersion(found.apiVersion);
  } catch (e) {
    throw unrecognized((e as Error).message, body);
  }
  const expected = urlGvk(api);
  const gvk: GroupVersionKind = { ...gv, kind: found.kind === '' ? expected.kind : found.kind };
  if (gvk.version === '' && gvk.group === '') {
    gvk.group = expected.group;
    gvk.version = expected.version;
  }
  if (gvk.version === '' && gvk.group === expected.group) gvk.version = expected.version;
  if (gvk.version === '') {
    throw cannotHandle(gvk, `Object 'apiVersion' is missing in '${utf8Decoder.decode(body)}'`);
  }
  try {
    return { gvk, schema: schemaFor(gvk), expected };
  } catch (e) {
    throw cannotHandle(gvk, (e as Error).message);
  }
}

/** storedForm is the stored (core/v1) event of a body decoded into its Go type, which must be of the URL's API version. */
export function storedForm(decoded: Record<string, unknown>, t: Target, api: EventApi): CoreEvent {
  if (t.gvk.group !== t.expected.group || t.gvk.version !== t.expected.version) {
    throw newBadRequest(
      `the API version in the data (${gvString(t.gvk)}) does not match the expected API version (${gvString(t.expected)})`,
    );
  }
  return api === 'v1' ? encodeCoreEvent(decoded) : toCoreV1(decoded);
}

/** decodeNode decodes a body's JSON node into the stored form, with its warnings, or throws the apiserver's 400. */
export function decodeNode(root: JNode, body: Uint8Array, api: EventApi, options: DecodeOptions): DecodedEvent {
  const mode = options.fieldValidation ?? 'Warn';
  let found: { apiVersion: string; kind: string };
  try {
    found = interpret(root);
  } catch (e) {
    throw unrecognized((e as Error).message, body);
  }
  const t = target(found, body, api);

  const st: DecodeState = {
    strict: mode !== 'Ignore',
    structName: null,
    fieldStack: [],
    strictStack: [],
    savedError: null,
    strictErrors: [],
  };
  let decoded: Record<string, unknown>;
  try {
    decoded = (decodeInto(root, t.schema, zeroOf(t.schema), st) ?? {}) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof FatalDecodeError) throw cannotHandle(t.gvk, e.message);
    throw e;
  }
  if (st.savedError !== null) throw cannotHandle(t.gvk, st.savedError);

  const warnings: string[] = [];
  if (st.strictErrors.length > 0) {
    if (mode === 'Strict') throw cannotHandle(t.gvk, `strict decoding error: ${st.strictErrors.join(', ')}`);
    warnings.push(...st.strictErrors);
  }
  return { event: storedForm(decoded, t, api), warnings };
}

