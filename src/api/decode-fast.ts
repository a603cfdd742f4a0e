/**
 * The fast path of the decoder: JSON.parse, for the bodies where it provably reads what Go's
 * decoder reads and the decode has nothing to report. Apart from the full decoder because it must
 * give exactly what that gives: the tests compare the two on every body (`decodeEventJsonFully`).
 */
import { canonicalMicroTime, canonicalTime } from './time.js';
import type { EventApi } from './types.js';
import { isSpace } from './decode-json.js';
import type { Schema } from './decode-schemas.js';
import { INT32_MAX, INT32_MIN, nullInto, setOwn, zeroOf } from './decode-struct.js';
import { foldEquals, storedForm, target } from './decode-kind.js';
import type { DecodedEvent, Target } from './decode-kind.js';

/** FAST_MAX_BYTES bounds the bodies the fast path reads: a shorter one cannot nest deeper than Go's limit. */
const FAST_MAX_BYTES = 16 * 1024;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
const goEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** knownTargets are the targets fastDecode resolved, by URL API, apiVersion and kind. */
const knownTargets = new Map<string, Target>();

/** last is the target the body before resolved to, with what it was resolved from. */
let last: { api: EventApi; apiVersion: string; kind: string; target: Target } | undefined;

/** FALLBACK says the fast path does not decide a body: the full decoder reads it. */
export const FALLBACK = Symbol('fallback');

/**
 * fastDecode reads a body with JSON.parse when that provably gives what Go's decoder gives, and the
 * decode has nothing to report: valid UTF-8 with no escaped surrogate (Go replaces a lone one), in
 * the exact form JSON.stringify writes back or Go's encoder writes (JSON.stringify's with `<`, `>`,
 * `&`, U+2028 and U+2029 escaped; a final newline), so no other whitespace, no duplicate key, every
 * number as Go reads it; every field known and of its type. Anything else, errors included, is FALLBACK.
 */
export function fastDecode(body: Uint8Array, api: EventApi): DecodedEvent | typeof FALLBACK {
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
  // The target of the body before, the usual case (a client sends one kind), needs no key built and hashed.
  let t = last !== undefined && last.api === api && last.apiVersion === apiVersion && last.kind === kind ? last.target : undefined;
  if (t === undefined) {
    // The length of apiVersion makes the key unambiguous whatever the two strings hold.
    const key = `${api} ${apiVersion.length}:${apiVersion}${kind}`;
    t = knownTargets.get(key);
    if (t === undefined) {
      try {
        t = target({ apiVersion, kind }, body, api);
      } catch {
        return FALLBACK;
      }
      // Only a kind and apiVersion that resolve are kept: a handful (Event in its versions, or left out).
      knownTargets.set(key, t);
    }
    last = { api, apiVersion, kind, target: t };
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
