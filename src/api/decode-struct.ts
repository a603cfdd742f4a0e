/**
 * The decoder: a JSON node decoded into one of the Go structs of `decode-schemas.ts` with
 * sigs.k8s.io/json semantics (case-sensitive keys, the first type error wins, a bad time aborts at
 * once, `null` is a no-op on non-pointer fields), and the strict-field checks that collect unknown
 * and duplicate fields for `fieldValidation` Strict and Warn.
 */
import { goQuote } from './label-selector.js';
import { canonicalMicroTime, canonicalTime, TimeParseError } from './time.js';
import { jsonKind } from './decode-json.js';
import type { JNode } from './decode-json.js';
import type { Schema } from './decode-schemas.js';

/** FatalDecodeError stops decoding at once, as an error returned by an UnmarshalJSON method does. */
export class FatalDecodeError extends Error {}

/** DecodeState is one decode's error context, its first saved type error and its strict-field errors. */
export interface DecodeState {
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

/** setOwn sets a key as an own property, so a key such as `__proto__` is data, never a prototype. */
export function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

const INT_RANGE = { int32: [-(2n ** 31n), 2n ** 31n - 1n], int64: [-(2n ** 63n), 2n ** 63n - 1n] } as const;
/** INT32_MIN is the least value of an int32 field. */
export const INT32_MIN = -(2 ** 31);
/** INT32_MAX is the greatest value of an int32 field. */
export const INT32_MAX = 2 ** 31 - 1;

/** zeroOf is the zero value of a Go type, as a field starts before decoding. */
export function zeroOf(s: Schema): unknown {
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
export function nullInto(s: Schema, existing: unknown): unknown {
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
export function decodeInto(node: JNode, s: Schema, existing: unknown, st: DecodeState): unknown {
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

