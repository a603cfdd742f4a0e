import { encodeCoreEvent, toCoreV1 } from './conversion.js';
import { goQuote } from './label-selector.js';
import { newBadRequest } from './status.js';
import type { StatusError } from './status.js';
import { canonicalMicroTime, canonicalTime, TimeParseError } from './time.js';
import type { CoreEvent, EventApi } from './types.js';

/**
 * Reading a create/update body into the stored (core/v1) form, as kube-apiserver does:
 *
 * 1. the JSON is checked for syntax (Go's scanner, Go's messages);
 * 2. `kind`/`apiVersion` are read the way apimachinery's meta factory reads them (case-insensitive
 *    keys, last one wins) and defaulted from the URL;
 * 3. the body is decoded into the Go struct of its own group/version with sigs.k8s.io/json semantics:
 *    case-sensitive keys, the first type error wins, a bad time aborts at once, unknown and duplicate
 *    fields are collected (Strict and Warn only), `null` is a no-op on non-pointer fields;
 * 4. errors are wrapped as the create handler does (`transformDecodeError`), and a body of another
 *    API version is refused after decoding.
 */

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

// ---------------------------------------------------------------------------------------------
// JSON values, from text (with Go's syntax errors) or from an already-parsed JS value.

type JNode =
  | { t: 'object'; readonly entries: [string, JNode][]; raw(): unknown }
  | { t: 'array'; readonly items: JNode[]; raw(): unknown }
  | { t: 'string'; v: string }
  | { t: 'number'; text: string }
  | { t: 'bool'; v: boolean }
  | { t: 'null' };

/** JsonSyntaxError carries the text of Go's `*json.SyntaxError`. */
class JsonSyntaxError extends Error {}

const MAX_NESTING_DEPTH = 10000;
const utf8Decoder = new TextDecoder();

/** quoteChar is encoding/json's quoteChar: a byte shown as the rune of the same value, Go-quoted. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const q = goQuote(String.fromCharCode(c));
  return `'${q.slice(1, -1)}'`;
}

function isAscii(b: Uint8Array): boolean {
  for (let k = 0; k < b.length; k++) if (b[k]! >= 0x80) return false;
  return true;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/**
 * parseJson parses JSON text as Go's encoding/json does, byte by byte, failing with Go's message at
 * the first offending byte. At end of input, Go feeds a space to the current state, so an
 * unfinished number or literal reports `invalid character ' ' ...` rather than `unexpected end`.
 */
function parseJson(b: Uint8Array): JNode {
  let i = 0;
  const n = b.length;
  // A body of ASCII bytes only (the usual case) is decoded once; its strings are then slices of it.
  const ascii = isAscii(b) ? utf8Decoder.decode(b) : undefined;
  const slice = (from: number, to: number): string => (ascii !== undefined ? ascii.slice(from, to) : utf8Decoder.decode(b.subarray(from, to)));
  const syntax = (c: number, context: string): JsonSyntaxError =>
    new JsonSyntaxError(`invalid character ${quoteChar(c)} ${context}`);
  const eof = (): JsonSyntaxError => new JsonSyntaxError('unexpected end of JSON input');
  const at = (c: number | undefined, context: string): JsonSyntaxError =>
    c === undefined ? syntax(0x20, context) : syntax(c, context);

  function parseString(): string {
    // b[i] is the opening quote.
    i++;
    let out = '';
    let segment = i;
    let unicodeEscape = false;
    for (;;) {
      if (i >= n) throw eof();
      const c = b[i]!;
      if (c === 0x22) {
        out += slice(segment, i);
        i++;
        // Go turns an escaped surrogate that is not half of a pair into U+FFFD (only a \u escape can make one).
        return unicodeEscape ? out.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd') : out;
      }
      if (c < 0x20) throw syntax(c, 'in string literal');
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += slice(segment, i);
      i++;
      const e = b[i];
      switch (e) {
        case 0x62: out += '\b'; break;
        case 0x66: out += '\f'; break;
        case 0x6e: out += '\n'; break;
        case 0x72: out += '\r'; break;
        case 0x74: out += '\t'; break;
        case 0x5c: out += '\\'; break;
        case 0x2f: out += '/'; break;
        case 0x22: out += '"'; break;
        case 0x75: {
          unicodeEscape = true;
          let code = 0;
          for (let k = 1; k <= 4; k++) {
            const h = b[i + k];
            if (h === undefined || !isHex(h)) {
              i += k;
              throw at(h, 'in \\u hexadecimal character escape');
            }
            code = code * 16 + parseInt(String.fromCharCode(h), 16);
          }
          i += 4;
          out += String.fromCharCode(code);
          break;
        }
        default:
          throw at(e, 'in string escape code');
      }
      i++;
      segment = i;
    }
  }

  function parseNumber(): string {
    const start = i;
    if (b[i] === 0x2d) {
      i++;
      if (!isDigit(b[i])) throw at(b[i], 'in numeric literal');
    }
    if (b[i] === 0x30) i++;
    else while (isDigit(b[i])) i++;
    if (b[i] === 0x2e) {
      i++;
      if (!isDigit(b[i])) throw at(b[i], 'after decimal point in numeric literal');
      while (isDigit(b[i])) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      if (!isDigit(b[i])) throw at(b[i], 'in exponent of numeric literal');
      while (isDigit(b[i])) i++;
    }
    return ascii !== undefined ? ascii.slice(start, i) : String.fromCharCode(...b.subarray(start, i));
  }

  function parseLiteral(word: string): void {
    for (let k = 1; k < word.length; k++) {
      const c = b[i + k];
      if (c !== word.charCodeAt(k)) {
        i += k;
        throw at(c, `in literal ${word} (expecting '${word[k]}')`);
      }
    }
    i += word.length;
  }

  function skipSpace(): void {
    while (i < n && isSpace(b[i]!)) i++;
  }

  type Frame = { node: JNode & { t: 'object' | 'array' }; key: string };
  const stack: Frame[] = [];
  const start = (): number => i;

  /** readKey reads `"key" :` after `{` or `,`, where b[i] must begin the key. */
  function readKey(frame: Frame): void {
    skipSpace();
    if (i >= n) throw eof();
    if (b[i] !== 0x22) throw syntax(b[i]!, 'looking for beginning of object key string');
    frame.key = parseString();
    skipSpace();
    if (i >= n) throw eof();
    if (b[i] !== 0x3a) throw syntax(b[i]!, 'after object key');
    i++;
  }

  for (;;) {
    // Begin a value.
    skipSpace();
    if (i >= n) throw eof();
    const c = b[i]!;
    let value: JNode;
    if (c === 0x7b || c === 0x5b) {
      if (stack.length + 1 > MAX_NESTING_DEPTH) throw syntax(c, 'exceeded max depth');
      const from = start();
      const node =
        c === 0x7b
          ? ({ t: 'object', entries: [], raw: (): unknown => JSON.parse(slice(from, nodeEnd.get(node)!)) } as JNode & {
              t: 'object';
            })
          : ({ t: 'array', items: [], raw: (): unknown => JSON.parse(slice(from, nodeEnd.get(node)!)) } as JNode & {
              t: 'array';
            });
      i++;
      const frame: Frame = { node, key: '' };
      stack.push(frame);
      skipSpace();
      if (i >= n) throw eof();
      if (c === 0x7b) {
        if (b[i] === 0x7d) {
          i++;
          stack.pop();
          nodeEnd.set(node, i);
          value = node;
        } else {
          readKey(frame);
          continue;
        }
      } else if (b[i] === 0x5d) {
        i++;
        stack.pop();
        nodeEnd.set(node, i);
        value = node;
      } else {
        continue;
      }
    } else if (c === 0x22) {
      value = { t: 'string', v: parseString() };
    } else if (c === 0x2d || isDigit(c)) {
      value = { t: 'number', text: parseNumber() };
    } else if (c === 0x74) {
      parseLiteral('true');
      value = { t: 'bool', v: true };
    } else if (c === 0x66) {
      parseLiteral('false');
      value = { t: 'bool', v: false };
    } else if (c === 0x6e) {
      parseLiteral('null');
      value = { t: 'null' };
    } else {
      throw syntax(c, 'looking for beginning of value');
    }

    // End of a value: attach it, then close containers until one wants another element.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        skipSpace();
        if (i < n) throw syntax(b[i]!, 'after top-level value');
        return value;
      }
      if (top.node.t === 'object') top.node.entries.push([top.key, value]);
      else top.node.items.push(value);
      skipSpace();
      if (i >= n) throw eof();
      const d = b[i]!;
      if (top.node.t === 'object') {
        if (d === 0x2c) {
          i++;
          readKey(top);
          break;
        }
        if (d !== 0x7d) throw syntax(d, 'after object key:value pair');
      } else {
        if (d === 0x2c) {
          i++;
          break;
        }
        if (d !== 0x5d) throw syntax(d, 'after array element');
      }
      i++;
      stack.pop();
      nodeEnd.set(top.node, i);
      value = top.node;
    }
  }
}

const nodeEnd = new WeakMap<object, number>();

/** fromJs views an already-parsed JS value as a JSON node (lazily, so unknown subtrees are never walked). */
function fromJs(v: unknown): JNode {
  if (v === null || v === undefined) return { t: 'null' };
  if (typeof v === 'string') return { t: 'string', v };
  if (typeof v === 'boolean') return { t: 'bool', v };
  if (typeof v === 'number') return Number.isFinite(v) ? { t: 'number', text: String(v) } : { t: 'null' };
  if (typeof v === 'bigint') return { t: 'number', text: String(v) };
  if (v instanceof Date) return { t: 'string', v: v.toISOString() };
  if (Array.isArray(v)) {
    return {
      t: 'array',
      get items() {
        return v.map((x) => fromJs(x));
      },
      raw: (): unknown => v,
    };
  }
  if (typeof v === 'object') {
    return {
      t: 'object',
      get entries() {
        return Object.entries(v)
          .filter(([, x]) => x !== undefined && typeof x !== 'function' && typeof x !== 'symbol')
          .map(([k, x]): [string, JNode] => [k, fromJs(x)]);
      },
      raw: () => v,
    };
  }
  return { t: 'null' };
}

/** jsonKind is how encoding/json names a JSON value in a type error. */
function jsonKind(node: JNode): string {
  switch (node.t) {
    case 'object':
      return 'object';
    case 'array':
      return 'array';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'bool':
      return 'bool';
    case 'null':
      return 'null';
  }
}

// ---------------------------------------------------------------------------------------------
// The Go structs a body decodes into.

type Schema =
  | { k: 'string'; go: string }
  | { k: 'int'; go: 'int32' | 'int64' }
  | { k: 'bool' }
  | { k: 'time' }
  | { k: 'microtime' }
  | { k: 'map' }
  | { k: 'slice'; go: string; elem: Schema }
  | { k: 'struct'; s: StructSchema }
  | { k: 'ptr'; elem: Schema }
  | { k: 'raw' };

interface StructSchema {
  name: string;
  go: string;
  fields: Map<string, Schema>;
}

const S = (go = 'string'): Schema => ({ k: 'string', go });
const INT32: Schema = { k: 'int', go: 'int32' };
const INT64: Schema = { k: 'int', go: 'int64' };
const TIME: Schema = { k: 'time' };
const MICRO: Schema = { k: 'microtime' };
const struct = (name: string, go: string, fields: [string, Schema][]): Schema => ({
  k: 'struct',
  s: { name, go, fields: new Map(fields) },
});
const ptr = (elem: Schema): Schema => ({ k: 'ptr', elem });

const objectReference = struct('ObjectReference', 'v1.ObjectReference', [
  ['kind', S()],
  ['namespace', S()],
  ['name', S()],
  ['uid', S('types.UID')],
  ['apiVersion', S()],
  ['resourceVersion', S()],
  ['fieldPath', S()],
]);
const eventSource = struct('EventSource', 'v1.EventSource', [
  ['component', S()],
  ['host', S()],
]);
const ownerReference = struct('OwnerReference', 'v1.OwnerReference', [
  ['apiVersion', S()],
  ['kind', S()],
  ['name', S()],
  ['uid', S('types.UID')],
  ['controller', ptr({ k: 'bool' })],
  ['blockOwnerDeletion', ptr({ k: 'bool' })],
]);
const managedFieldsEntry = struct('ManagedFieldsEntry', 'v1.ManagedFieldsEntry', [
  ['manager', S()],
  ['operation', S('v1.ManagedFieldsOperationType')],
  ['apiVersion', S()],
  ['time', ptr(TIME)],
  ['fieldsType', S()],
  ['fieldsV1', { k: 'raw' }],
  ['subresource', S()],
]);
const objectMeta = struct('ObjectMeta', 'v1.ObjectMeta', [
  ['name', S()],
  ['generateName', S()],
  ['namespace', S()],
  ['selfLink', S()],
  ['uid', S('types.UID')],
  ['resourceVersion', S()],
  ['generation', INT64],
  ['creationTimestamp', TIME],
  ['deletionTimestamp', ptr(TIME)],
  ['deletionGracePeriodSeconds', ptr(INT64)],
  ['labels', { k: 'map' }],
  ['annotations', { k: 'map' }],
  ['ownerReferences', { k: 'slice', go: '[]v1.OwnerReference', elem: ownerReference }],
  ['finalizers', { k: 'slice', go: '[]string', elem: S() }],
  ['managedFields', { k: 'slice', go: '[]v1.ManagedFieldsEntry', elem: managedFieldsEntry }],
]);

const coreEventSchema = struct('Event', 'v1.Event', [
  ['kind', S()],
  ['apiVersion', S()],
  ['metadata', objectMeta],
  ['involvedObject', objectReference],
  ['reason', S()],
  ['message', S()],
  ['source', eventSource],
  ['firstTimestamp', TIME],
  ['lastTimestamp', TIME],
  ['count', INT32],
  ['type', S()],
  ['eventTime', MICRO],
  [
    'series',
    ptr(
      struct('EventSeries', 'v1.EventSeries', [
        ['count', INT32],
        ['lastObservedTime', MICRO],
      ]),
    ),
  ],
  ['action', S()],
  ['related', ptr(objectReference)],
  ['reportingComponent', S()],
  ['reportingInstance', S()],
]);

/** eventsEventSchema is events.k8s.io Event; v1beta1 has the same fields under another Go package name. */
const eventsEventSchema = (pkg: string): Schema =>
  struct('Event', `${pkg}.Event`, [
    ['kind', S()],
    ['apiVersion', S()],
    ['metadata', objectMeta],
    ['eventTime', MICRO],
    [
      'series',
      ptr(
        struct('EventSeries', `${pkg}.EventSeries`, [
          ['count', INT32],
          ['lastObservedTime', MICRO],
        ]),
      ),
    ],
    ['reportingController', S()],
    ['reportingInstance', S()],
    ['action', S()],
    ['reason', S()],
    ['regarding', objectReference],
    ['related', ptr(objectReference)],
    ['note', S()],
    ['type', S()],
    ['deprecatedSource', eventSource],
    ['deprecatedFirstTimestamp', TIME],
    ['deprecatedLastTimestamp', TIME],
    ['deprecatedCount', INT32],
  ]);

// ---------------------------------------------------------------------------------------------
// The decoder: sigs.k8s.io/json semantics over a schema.

/** FatalDecodeError stops decoding at once, as an error returned by an UnmarshalJSON method does. */
class FatalDecodeError extends Error {}

interface DecodeState {
  strict: boolean;
  /** The Go errorContext: innermost struct and the JSON names of struct fields on the way down. */
  structName: string | null;
  fieldStack: string[];
  /** The strict-mode path: `metadata.labels.a`, `metadata.ownerReferences[0].x`. */
  strictStack: string[];
  savedError: string | null;
  strictErrors: string[];
}

const MAX_STRICT_ERRORS = 100;

function typeErrorText(st: DecodeState, value: string, goType: string): string {
  if (st.structName !== null || st.fieldStack.length > 0) {
    return `json: cannot unmarshal ${value} into Go struct field ${st.structName ?? ''}.${st.fieldStack.join('.')} of type ${goType}`;
  }
  return `json: cannot unmarshal ${value} into Go value of type ${goType}`;
}

function saveTypeError(st: DecodeState, value: string, goType: string): void {
  if (st.savedError === null) st.savedError = typeErrorText(st, value, goType);
}

function strictError(st: DecodeState, type: 'unknown field' | 'duplicate field', name: string): void {
  const path = st.strictStack.length > 0 ? `${st.strictStack.join('')}.${name}` : name;
  const text = `${type} ${goQuote(path)}`;
  if (st.strictErrors.length >= MAX_STRICT_ERRORS || st.strictErrors.includes(text)) return;
  st.strictErrors.push(text);
}

function pushStrictKey(st: DecodeState, key: string): void {
  if (!st.strict) return;
  if (st.strictStack.length > 0) st.strictStack.push('.', key);
  else st.strictStack.push(key);
}

function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

const INT_RANGE = { int32: [-(2n ** 31n), 2n ** 31n - 1n], int64: [-(2n ** 63n), 2n ** 63n - 1n] } as const;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function zeroOf(s: Schema): unknown {
  switch (s.k) {
    case 'string':
      return '';
    case 'int':
      return 0;
    case 'bool':
      return false;
    case 'time':
    case 'microtime':
      return null;
    case 'struct':
      return {};
    default:
      return undefined;
  }
}

/** nullInto is what a JSON null decodes to: nothing for a pointer, map, slice or raw field, the zero time for a time, and no change to any other field. */
function nullInto(s: Schema, existing: unknown): unknown {
    switch (s.k) {
      case 'ptr':
      case 'map':
      case 'slice':
      case 'raw':
        return undefined;
      case 'time':
      case 'microtime':
        return null;
      default:
        return existing;
    }
}

/** decodeInto decodes node into a value of schema s, starting from existing (Go reuses structs, maps and slice elements). */
function decodeInto(node: JNode, s: Schema, existing: unknown, st: DecodeState): unknown {
  if (node.t === 'null') return nullInto(s, existing);
  switch (s.k) {
    case 'ptr':
      return decodeInto(node, s.elem, existing ?? zeroOf(s.elem), st);
    case 'raw':
      return node.t === 'object' || node.t === 'array' ? node.raw() : node.t === 'number' ? Number(node.text) : node.v;
    case 'time':
    case 'microtime': {
      if (node.t !== 'string') throw new FatalDecodeError(typeErrorText(st, jsonKind(node), 'string'));
      try {
        return s.k === 'time' ? canonicalTime(node.v) : canonicalMicroTime(node.v);
      } catch (e) {
        if (e instanceof TimeParseError) throw new FatalDecodeError(e.message);
        throw e;
      }
    }
    case 'string':
      if (node.t === 'string') return node.v;
      saveTypeError(st, jsonKind(node), s.go);
      return existing;
    case 'bool':
      if (node.t === 'bool') return node.v;
      saveTypeError(st, jsonKind(node), 'bool');
      return existing;
    case 'int': {
      if (node.t !== 'number') {
        saveTypeError(st, jsonKind(node), s.go);
        return existing;
      }
      const [lo, hi] = INT_RANGE[s.go];
      if (/^-?\d+$/.test(node.text)) {
        const n = BigInt(node.text);
        if (n >= lo && n <= hi) return Number(n);
      }
      saveTypeError(st, `number ${node.text}`, s.go);
      return existing;
    }
    case 'map': {
      if (node.t !== 'object') {
        saveTypeError(st, jsonKind(node), 'map[string]string');
        return existing;
      }
      const out = (existing as Record<string, string> | undefined) ?? {};
      const seen = new Set<string>();
      const depth = st.strictStack.length;
      for (const [key, child] of node.entries) {
        if (st.strict) {
          if (seen.has(key)) strictError(st, 'duplicate field', key);
          seen.add(key);
        }
        pushStrictKey(st, key);
        // Go writes the element back even when it stayed zero, so `"a": null` stores "".
        let v = '';
        if (child.t === 'string') v = child.v;
        else if (child.t !== 'null') saveTypeError(st, jsonKind(child), 'string');
        setOwn(out, key, v);
        st.strictStack.length = depth;
      }
      return out;
    }
    case 'slice': {
      if (node.t !== 'array') {
        saveTypeError(st, jsonKind(node), s.go);
        return existing;
      }
      const prev = (existing as unknown[] | undefined) ?? [];
      const out: unknown[] = [];
      const depth = st.strictStack.length;
      node.items.forEach((child, idx) => {
        if (st.strict) st.strictStack.push('[', String(idx), ']');
        const start = idx < prev.length ? prev[idx] : zeroOf(s.elem);
        out.push(decodeInto(child, s.elem, start, st));
        st.strictStack.length = depth;
      });
      return out;
    }
    case 'struct': {
      if (node.t !== 'object') {
        saveTypeError(st, jsonKind(node), s.s.go);
        return existing;
      }
      const out = (existing as Record<string, unknown> | undefined) ?? {};
      const seen = new Set<string>();
      const depth = st.strictStack.length;
      for (const [key, child] of node.entries) {
        const field = s.s.fields.get(key);
        if (field === undefined) {
          if (st.strict) strictError(st, 'unknown field', key);
          continue;
        }
        if (st.strict) {
          if (seen.has(key)) strictError(st, 'duplicate field', key);
          seen.add(key);
        }
        const savedStruct = st.structName;
        st.structName = s.s.name;
        st.fieldStack.push(key);
        pushStrictKey(st, key);
        const v = decodeInto(child, field, out[key], st);
        if (v === undefined) delete out[key];
        else out[key] = v;
        st.fieldStack.pop();
        st.structName = savedStruct;
        st.strictStack.length = depth;
      }
      return out;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// kind/apiVersion, the scheme, and the apiserver's error wrapping.

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

const gvString = (g: { group: string; version: string }): string => (g.group === '' ? g.version : `${g.group}/${g.version}`);

/** SCHEME_NAME is how kube-apiserver's scheme names itself in "no kind is registered" errors. */
const SCHEME_NAME = 'pkg/api/legacyscheme/scheme.go:30';

const INTERPRET_STRUCT =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** foldEquals is encoding/json's case-insensitive key match for the ASCII names apiVersion and kind. */
function foldEquals(key: string, name: string): boolean {
  if (key === name) return true;
  // The two folds below map one UTF-16 unit to one, so a key of another length never matches.
  if (key.length !== name.length) return false;
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

/** CORE_V1_KINDS are kinds registered in core/v1 besides Event; posting one to events fails in conversion. */
const CORE_V1_KINDS = new Set([
  'Binding', 'ComponentStatus', 'ComponentStatusList', 'ConfigMap', 'ConfigMapList', 'Endpoints', 'EndpointsList',
  'EventList', 'LimitRange', 'LimitRangeList', 'List', 'Namespace', 'NamespaceList', 'Node', 'NodeList',
  'PersistentVolume', 'PersistentVolumeClaim', 'PersistentVolumeClaimList', 'PersistentVolumeList', 'Pod', 'PodList',
  'PodTemplate', 'PodTemplateList', 'RangeAllocation', 'ReplicationController', 'ReplicationControllerList',
  'ResourceQuota', 'ResourceQuotaList', 'Secret', 'SecretList', 'Service', 'ServiceAccount', 'ServiceAccountList',
  'ServiceList', 'DeleteOptions', 'ListOptions', 'GetOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'WatchEvent',
]);
/** UNVERSIONED_KINDS are registered for every version (metav1's unversioned types). */
const UNVERSIONED_KINDS = new Set(['Status', 'APIVersions', 'APIGroupList', 'APIGroup', 'APIResourceList']);

/** schemaFor finds the Go type the apiserver would decode this group/version/kind into, or the error it would give. */
function schemaFor(gvk: GroupVersionKind): Schema {
  const gv = gvString(gvk);
  if (gvk.kind === 'Event') {
    if (gv === 'v1') return coreEventSchema;
    if (gv === 'events.k8s.io/v1') return eventsEventSchema('v1');
    if (gv === 'events.k8s.io/v1beta1') return eventsEventSchema('v1beta1');
  }
  const registered =
    UNVERSIONED_KINDS.has(gvk.kind) ||
    (gv === 'v1' && CORE_V1_KINDS.has(gvk.kind)) ||
    ((gv === 'events.k8s.io/v1' || gv === 'events.k8s.io/v1beta1') && gvk.kind === 'EventList');
  if (registered) {
    const pkg = gvk.version === '' ? 'v1' : gvk.version;
    throw new Error(`converting (${UNVERSIONED_KINDS.has(gvk.kind) ? 'v1' : pkg}.${gvk.kind}) to (core.Event): unknown conversion`);
  }
  throw new Error(`no kind ${goQuote(gvk.kind)} is registered for version ${goQuote(gv)} in scheme ${goQuote(SCHEME_NAME)}`);
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

function unrecognized(err: string, body: Uint8Array): StatusError {
  return newBadRequest(`the object provided is unrecognized (must be of type Event): ${err} (${summarizeData(body)})`);
}

function cannotHandle(gvk: GroupVersionKind, err: string): StatusError {
  return newBadRequest(`${gvk.kind} in version ${goQuote(gvk.version)} cannot be handled as a Event: ${err}`);
}

const utf8Encoder = new TextEncoder();

/** Target is the Go type a body decodes into: its group/version/kind, its schema, and the URL's group/version/kind. */
interface Target {
  gvk: GroupVersionKind;
  schema: Schema;
  expected: GroupVersionKind;
}

/** target resolves the kind and apiVersion a body gives (`found`) against the URL's, as the apiserver's decoder does. */
function target(found: { apiVersion: string; kind: string }, body: Uint8Array, api: EventApi): Target {
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
function storedForm(decoded: Record<string, unknown>, t: Target, api: EventApi): CoreEvent {
  if (t.gvk.group !== t.expected.group || t.gvk.version !== t.expected.version) {
    throw newBadRequest(
      `the API version in the data (${gvString(t.gvk)}) does not match the expected API version (${gvString(t.expected)})`,
    );
  }
  return api === 'v1' ? encodeCoreEvent(decoded) : toCoreV1(decoded);
}

function decodeNode(root: JNode, body: Uint8Array, api: EventApi, options: DecodeOptions): DecodedEvent {
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

// ---------------------------------------------------------------------------------------------
// The fast path: JSON.parse, for the bodies where it provably reads what Go's decoder reads.

/** FAST_MAX_BYTES bounds the bodies the fast path reads: a shorter one cannot nest deeper than Go's limit. */
const FAST_MAX_BYTES = 16 * 1024;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
const goEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** knownTargets are the targets fastDecode resolved, by URL API, apiVersion and kind. */
const knownTargets = new Map<string, Target>();

/** Fallback says the fast path does not decide a body: the full decoder reads it. */
const FALLBACK = Symbol('fallback');

/**
 * fastDecode reads a body with JSON.parse when that provably gives what Go's decoder gives, and the
 * decode has nothing to report: valid UTF-8 with no escaped surrogate (Go replaces a lone one), in
 * the exact form JSON.stringify writes back or Go's encoder writes (JSON.stringify's with `<`, `>`,
 * `&`, U+2028 and U+2029 escaped; a final newline), so no other whitespace, no duplicate key, every
 * number as Go reads it; every field known and of its type. Anything else, errors included, is FALLBACK.
 */
function fastDecode(body: Uint8Array, api: EventApi): DecodedEvent | typeof FALLBACK {
  if (body.length === 0 || body.length > FAST_MAX_BYTES) return FALLBACK;
  let text: string;
  let root: unknown;
  try {
    // Go's encoder ends its text with a newline, which both decoders skip.
    text = strictUtf8.decode(body);
    let end = text.length;
    while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
    if (end < text.length) text = text.slice(0, end);
    // An escaped surrogate: Go reads one that is not half of a pair as U+FFFD, JSON.parse keeps it.
    if (text.includes('\\u') && ESCAPED_SURROGATE.test(text)) return FALLBACK;
    root = JSON.parse(text);
  } catch {
    return FALLBACK;
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return FALLBACK;
  const again = JSON.stringify(root);
  // The form Go's encoder writes is JSON.stringify's with <, >, &, U+2028 and U+2029 escaped.
  if (again !== text && !(text.includes('\\u') && again.replace(GO_ESCAPED, goEscape) === text)) return FALLBACK;
  const o = root as Record<string, unknown>;
  // apimachinery reads kind and apiVersion with case-insensitive keys: only the exact names here.
  for (const key in o) {
    if (key !== 'apiVersion' && key !== 'kind' && (foldEquals(key, 'apiVersion') || foldEquals(key, 'kind'))) return FALLBACK;
  }
  const apiVersion = o.apiVersion ?? '';
  const kind = o.kind ?? '';
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return FALLBACK;
  // The length of apiVersion makes the key unambiguous whatever the two strings hold.
  const key = `${api} ${apiVersion.length}:${apiVersion}${kind}`;
  let t = knownTargets.get(key);
  if (t === undefined) {
    try {
      t = target({ apiVersion, kind }, body, api);
    } catch {
      return FALLBACK;
    }
    // Only a kind and apiVersion that resolve are kept: a handful (Event in its versions, or left out).
    knownTargets.set(key, t);
  }
  if (t.gvk.group !== t.expected.group || t.gvk.version !== t.expected.version) return FALLBACK;
  const decoded = fastInto(o, t.schema, zeroOf(t.schema));
  if (decoded === FALLBACK) return FALLBACK;
  return { event: storedForm((decoded ?? {}) as Record<string, unknown>, t, api), warnings: [] };
}

/** fastInto is decodeInto over a parsed value, for values it reads without an error or warning; FALLBACK otherwise. */
function fastInto(v: unknown, s: Schema, existing: unknown): unknown {
  if (v === null) return nullInto(s, existing);
  switch (s.k) {
    case 'ptr':
      return fastInto(v, s.elem, existing ?? zeroOf(s.elem));
    case 'raw':
      return v;
    case 'time':
    case 'microtime':
      if (typeof v !== 'string') return FALLBACK;
      try {
        return s.k === 'time' ? canonicalTime(v) : canonicalMicroTime(v);
      } catch {
        return FALLBACK;
      }
    case 'string':
      return typeof v === 'string' ? v : FALLBACK;
    case 'bool':
      return typeof v === 'boolean' ? v : FALLBACK;
    case 'int': {
      // A safe integer is within int64 whatever it is: only int32 bounds it further.
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return FALLBACK;
      return s.go === 'int64' || (v >= INT32_MIN && v <= INT32_MAX) ? v : FALLBACK;
    }
    case 'map': {
      if (typeof v !== 'object' || Array.isArray(v)) return FALLBACK;
      const out = (existing as Record<string, string> | undefined) ?? {};
      const m = v as Record<string, unknown>;
      for (const key of Object.keys(m)) {
        const x = m[key];
        // Go writes the element back even when it stayed zero, so `"a": null` stores "".
        if (x !== null && typeof x !== 'string') return FALLBACK;
        setOwn(out, key, x ?? '');
      }
      return out;
    }
    case 'slice': {
      if (!Array.isArray(v)) return FALLBACK;
      const out: unknown[] = [];
      for (const x of v) {
        const d = fastInto(x, s.elem, zeroOf(s.elem));
        if (d === FALLBACK) return FALLBACK;
        out.push(d);
      }
      return out;
    }
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) return FALLBACK;
      const out = (existing as Record<string, unknown> | undefined) ?? {};
      const o = v as Record<string, unknown>;
      for (const key of Object.keys(o)) {
        const field = s.s.fields.get(key);
        if (field === undefined) return FALLBACK;
        const d = fastInto(o[key], field, out[key]);
        if (d === FALLBACK) return FALLBACK;
        if (d === undefined) delete out[key];
        else out[key] = d;
      }
      return out;
    }
  }
}

/**
 * decodeEvent reads an already-parsed JSON body posted to the given API into the stored (core/v1)
 * form. It throws a StatusError (400 BadRequest) with kube-apiserver's text for every body the
 * apiserver refuses while decoding. Validation of the values is not its job.
 */
export function decodeEvent(body: unknown, api: EventApi, options: DecodeOptions = {}): DecodedEvent {
  if (body === undefined) {
    return decodeEventJson(new Uint8Array(0), api, options);
  }
  let text = '';
  try {
    text = JSON.stringify(body) ?? '';
  } catch {
    // Only the error summary uses the text; a value JSON cannot show (a cycle, a bigint) has none.
  }
  return decodeNode(fromJs(body), utf8Encoder.encode(text), api, options);
}

/** jsonSyntaxError is Go's encoding/json message for text that is not JSON, or undefined for JSON. */
export function jsonSyntaxError(text: string): string | undefined {
  try {
    parseJson(utf8Encoder.encode(text));
    return undefined;
  } catch (e) {
    if (e instanceof JsonSyntaxError) return e.message;
    throw e;
  }
}

/**
 * decodeEventJson is decodeEvent for the raw request body. Working on the text adds what a parsed
 * value has lost: Go's syntax-error messages, duplicate fields, and numbers exactly as written.
 */
export function decodeEventJson(text: string | Uint8Array, api: EventApi, options: DecodeOptions = {}): DecodedEvent {
  const body = typeof text === 'string' ? utf8Encoder.encode(text) : text;
  const fast = fastDecode(body, api);
  if (fast !== FALLBACK) return fast;
  return decodeEventJsonFully(body, api, options);
}

/** decodeEventJsonFast is decodeEventJson's fast path alone: the decoded body, or undefined for a body it leaves to the full decoder. */
export function decodeEventJsonFast(body: Uint8Array, api: EventApi): DecodedEvent | undefined {
  const fast = fastDecode(body, api);
  return fast === FALLBACK ? undefined : fast;
}

/** decodeEventJsonFully is decodeEventJson without its fast path (which must give what this gives). */
export function decodeEventJsonFully(body: Uint8Array, api: EventApi, options: DecodeOptions = {}): DecodedEvent {
  let root: JNode;
  try {
    root = parseJson(body);
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw unrecognized(`couldn't get version/kind; json parse error: ${e.message}`, body);
    throw e;
  }
  return decodeNode(root, body, api, options);
}
