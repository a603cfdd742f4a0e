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
 *
 * Each step has its file: the JSON reader (1, `decode-json.ts`), kind, apiVersion and the error
 * wrapping (2 and 4, `decode-kind.ts`), the Go structs of each API version (`decode-schemas.ts`) and
 * the decoder with its strict-field checks (3, `decode-struct.ts`). `decode-fast.ts` reads the
 * common body with JSON.parse where that provably gives the same answer.
 */
import { fromJs, JsonSyntaxError, parseJson } from './decode-json.js';
import type { JNode } from './decode-json.js';
import { FALLBACK, fastDecode } from './decode-fast.js';
import { decodeNode, unrecognized, utf8Encoder } from './decode-kind.js';
import type { DecodeOptions, DecodedEvent } from './decode-kind.js';
import type { EventApi } from './types.js';

export type { DecodeOptions, DecodedEvent, FieldValidation } from './decode-kind.js';

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
