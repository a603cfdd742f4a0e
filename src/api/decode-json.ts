/**
 * The JSON reader of event bodies: JSON values from text, read byte by byte as Go's encoding/json
 * reads them (with Go's syntax errors), or from an already-parsed JS value. Apart from the decoder
 * because it knows nothing of events: it only says what a body holds, and where it is not JSON.
 */
import { goQuote } from './label-selector.js';

/** JNode is a JSON value as the decoder walks it: objects keep their keys in order, duplicates included, and numbers their text. */
export type JNode =
  | { t: 'object'; readonly entries: [string, JNode][]; raw(): unknown }
  | { t: 'array'; readonly items: JNode[]; raw(): unknown }
  | { t: 'string'; v: string }
  | { t: 'number'; text: string }
  | { t: 'bool'; v: boolean }
  | { t: 'null' };

/** JsonSyntaxError carries the text of Go's `*json.SyntaxError`. */
export class JsonSyntaxError extends Error {}

const MAX_NESTING_DEPTH = 10000;
/** utf8Decoder decodes body bytes, replacing invalid UTF-8 as Go does. */
export const utf8Decoder = new TextDecoder();

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

/** isSpace is JSON whitespace. */
export const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/**
 * parseJson parses JSON text as Go's encoding/json does, byte by byte, failing with Go's message at
 * the first offending byte. At end of input, Go feeds a space to the current state, so an
 * unfinished number or literal reports `invalid character ' ' ...` rather than `unexpected end`.
 */
export function parseJson(b: Uint8Array): JNode {
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
export function fromJs(v: unknown): JNode {
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
export function jsonKind(node: JNode): string {
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

