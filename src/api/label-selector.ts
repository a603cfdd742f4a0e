import { compareUtf8 } from './field-selector.js';
import { isQualifiedName, isValidLabelValue } from './names.js';
import { newBadRequest } from './status.js';

/**
 * LabelSelectorOperator is a label requirement's operator, spelled as apimachinery's
 * selection.Operator: `exists` for a bare key, `!` for `!key`, `gt`/`lt` for `>`/`<`.
 */
export type LabelSelectorOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** LabelRequirement is one term of a label selector. */
export interface LabelRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values: string[];
}

/** LabelSelector is a parsed label selector: an AND of requirements sorted by key. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** empty is true when the selector selects everything. */
  readonly empty: boolean;
  matches(labels: Record<string, string> | undefined): boolean;
  /** toString prints the selector as upstream's Selector.String(). */
  toString(): string;
}

/** MetaLabelSelectorRequirement is metav1.LabelSelectorRequirement. */
export interface MetaLabelSelectorRequirement {
  key: string;
  /** operator is `In`, `NotIn`, `Exists` or `DoesNotExist`. */
  operator: string;
  values?: string[];
}

/** MetaLabelSelector is metav1.LabelSelector, the structured form used inside objects. */
export interface MetaLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: MetaLabelSelectorRequirement[];
}

// ---- Go-compatible rendering of bad values in field errors ----

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** goQuote renders a string as Go's %q (strconv.Quote) does. */
export function goQuote(s: string): string {
  let out = '"';
  for (const c of s) {
    const cp = c.codePointAt(0) ?? 0;
    if (c === '"' || c === '\\') out += `\\${c}`;
    else if (printable.test(c)) out += c;
    else if (c === '\x07') out += '\\a';
    else if (c === '\b') out += '\\b';
    else if (c === '\f') out += '\\f';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (c === '\v') out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

// encoding/json escapes HTML-significant characters and the JS line separators.
function goJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function invalid(path: string, badValue: string | string[] | null, detail: string): string {
  const value = typeof badValue === 'string' ? goQuote(badValue) : goJson(badValue);
  return `${path}: Invalid value: ${value}: ${detail}`;
}

// Aggregated field errors print alone when single, else bracketed; duplicates drop out.
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

// ---- requirements ----

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, within int64.
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < int64Min || n > int64Max ? undefined : n;
}

const binaryOperators = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

// The requirement checks of labels.NewRequirement, with its field paths (no root path).
function requirementErrors(key: string, op: LabelSelectorOperator, values: string[] | null): string[] {
  const errs: string[] = [];
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length > 0) errs.push(invalid('key', key, keyErrs.join('; ')));
  const vals = values ?? [];
  switch (op) {
    case 'in':
    case 'notin':
      if (vals.length === 0) errs.push(invalid('values', values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (vals.length !== 1) errs.push(invalid('values', values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (vals.length !== 0) errs.push(invalid('values', values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (vals.length !== 1) errs.push(invalid('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      vals.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
  }
  vals.forEach((v, i) => {
    const valueErrs = isValidLabelValue(v);
    if (valueErrs.length > 0) errs.push(invalid(`values[${i}][${key}]`, v, valueErrs.join('; ')));
  });
  return errs;
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string> | undefined): boolean {
  const has = labels !== undefined && Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (value === undefined || r.values.length !== 1) return false;
      const actual = parseInt64(value);
      const bound = parseInt64(r.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

const operatorText: Record<LabelSelectorOperator, string> = {
  '=': '=',
  '==': '==',
  '!=': '!=',
  in: ' in ',
  notin: ' notin ',
  gt: '>',
  lt: '<',
  exists: '',
  '!': '',
};

function requirementString(r: LabelRequirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return `!${r.key}`;
  const values = r.values.length === 1 ? (r.values[0] ?? '') : [...r.values].sort(compareUtf8).join(',');
  const body = r.operator === 'in' || r.operator === 'notin' ? `(${values})` : values;
  return `${r.key}${operatorText[r.operator]}${body}`;
}

function selectorOf(reqs: LabelRequirement[]): LabelSelector {
  // Array.prototype.sort is stable, which upstream's small-slice insertion sort also is.
  const requirements = [...reqs].sort((a, b) => compareUtf8(a.key, b.key));
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels)),
    toString: () => requirements.map(requirementString).join(','),
  };
}

/** LABEL_SELECTOR_NOTHING selects no object (upstream's labels.Nothing()). */
export const LABEL_SELECTOR_NOTHING: LabelSelector = {
  requirements: [],
  empty: false,
  matches: () => false,
  toString: () => '',
};

// ---- lexer and parser (apimachinery labels.Parse) ----

type Token =
  | 'error'
  | 'end'
  | ')'
  | ','
  | '!'
  | '=='
  | '='
  | '>'
  | 'identifier'
  | 'in'
  | '<'
  | '!='
  | 'notin'
  | '(';

const literalTokens: ReadonlyMap<string, Token> = new Map<string, Token>([
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['==', '=='],
  ['=', '='],
  ['>', '>'],
  ['in', 'in'],
  ['<', '<'],
  ['!=', '!='],
  ['notin', 'notin'],
  ['(', '('],
]);

const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string): boolean => '=!(),><'.includes(c);

interface Item {
  tok: Token;
  lit: string;
}

// A NUL reads as end of input, as in upstream's byte lexer.
function lex(s: string): Item[] {
  let pos = 0;
  const read = (): string => (pos < s.length ? s[pos++] ?? '\0' : '\0');
  const unread = (): void => {
    pos--;
  };
  const items: Item[] = [];
  for (;;) {
    let c = read();
    while (isWhitespace(c)) c = read();
    let item: Item;
    if (c === '\0') {
      item = { tok: 'end', lit: '' };
    } else if (isSpecial(c)) {
      unread();
      let buffer = '';
      let last: Item | undefined;
      for (;;) {
        const ch = read();
        if (ch === '\0') break;
        if (!isSpecial(ch)) {
          unread();
          break;
        }
        buffer += ch;
        const tok = literalTokens.get(buffer);
        if (tok !== undefined) last = { tok, lit: buffer };
        else if (last !== undefined) {
          unread();
          break;
        }
      }
      item = last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` };
    } else {
      unread();
      let buffer = '';
      for (;;) {
        const ch = read();
        if (ch === '\0') break;
        if (isSpecial(ch) || isWhitespace(ch)) {
          unread();
          break;
        }
        buffer += ch;
      }
      item = { tok: literalTokens.get(buffer) ?? 'identifier', lit: buffer };
    }
    items.push(item);
    if (item.tok === 'end') return items;
  }
}

type Context = 'keyAndOperator' | 'values';

// Carries upstream's error text until parseLabelSelector turns it into a 400.
class ParseError extends Error {}

class Parser {
  private position = 0;
  constructor(private readonly items: Item[]) {}

  private tokenIn(item: Item | undefined, context: Context): Item {
    const it = item ?? { tok: 'end', lit: '' };
    // In value position `in` and `notin` are plain identifiers.
    if (context === 'values' && (it.tok === 'in' || it.tok === 'notin')) return { tok: 'identifier', lit: it.lit };
    return it;
  }

  lookahead(context: Context): Item {
    return this.tokenIn(this.items[this.position], context);
  }

  consume(context: Context): Item {
    return this.tokenIn(this.items[this.position++], context);
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead('values');
      if (tok === 'identifier' || tok === '!') {
        let r: LabelRequirement;
        try {
          r = this.parseRequirement();
        } catch (e) {
          if (e instanceof ParseError) throw new ParseError(`unable to parse requirement: ${e.message}`);
          throw e;
        }
        reqs.push(r);
        const next = this.consume('values');
        if (next.tok === 'end') return reqs;
        if (next.tok !== ',') throw new ParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
        const after = this.lookahead('values');
        if (after.tok !== 'identifier' && after.tok !== '!') {
          throw new ParseError(`found '${after.lit}', expected: identifier after ','`);
        }
      } else if (tok === 'end') {
        return reqs;
      } else {
        throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return newRequirement(key, operator, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort(compareUtf8));
  }

  private parseKeyAndInferOperator(): { key: string; operator: LabelSelectorOperator | undefined } {
    let operator: LabelSelectorOperator | undefined;
    let { tok, lit } = this.consume('values');
    if (tok === '!') {
      operator = '!';
      ({ tok, lit } = this.consume('values'));
    }
    if (tok !== 'identifier') throw new ParseError(`found '${lit}', expected: identifier`);
    const keyErrs = isQualifiedName(lit);
    if (keyErrs.length > 0) throw new ParseError(invalid('<nil>', lit, keyErrs.join('; ')));
    const next = this.lookahead('values').tok;
    if ((next === 'end' || next === ',') && operator !== '!') operator = 'exists';
    return { key: lit, operator };
  }

  private parseOperator(): LabelSelectorOperator {
    const { tok, lit } = this.consume('keyAndOperator');
    switch (tok) {
      case 'in':
        return 'in';
      case '=':
        return '=';
      case '==':
        return '==';
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      case 'notin':
        return 'notin';
      case '!=':
        return '!=';
      default:
        throw new ParseError(`found '${lit}', expected: ${binaryOperators.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume('values');
    if (open.tok !== '(') throw new ParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead('values');
    if (tok === 'identifier' || tok === ',') {
      const s = this.parseIdentifiersList();
      if (this.consume('values').tok !== ')') throw new ParseError(`found '${lit}', expected: ')'`);
      return s;
    }
    if (tok === ')') {
      this.consume('values');
      return new Set(['']);
    }
    throw new ParseError(`found '${lit}', expected: ',', ')' or identifier`);
  }

  // Empty entries (`(,a)`, `(a,,b)`, `(a,)`) stand for the empty value.
  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume('values');
      if (tok === 'identifier') {
        s.add(lit);
        const next = this.lookahead('values');
        if (next.tok === ',') continue;
        if (next.tok === ')') return s;
        throw new ParseError(`found '${next.lit}', expected: ',' or ')'`);
      } else if (tok === ',') {
        if (s.size === 0) s.add('');
        const next = this.lookahead('values').tok;
        if (next === ')') {
          s.add('');
          return s;
        }
        if (next === ',') s.add('');
      } else {
        throw new ParseError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const ahead = this.lookahead('values').tok;
    if (ahead === 'end' || ahead === ',') return new Set(['']);
    const { tok, lit } = this.consume('values');
    if (tok === 'identifier') return new Set([lit]);
    throw new ParseError(`found '${lit}', expected: identifier`);
  }
}

function newRequirement(key: string, operator: LabelSelectorOperator, values: string[]): LabelRequirement {
  const errs = requirementErrors(key, operator, values);
  if (errs.length > 0) throw new ParseError(aggregate(errs));
  return { key, operator, values };
}

/**
 * parseLabelSelector parses label selector text as the apiserver does (labels.Parse):
 * `=`, `==`, `!=`, `in (…)`, `notin (…)`, `key`, `!key`, `>`/`<`, comma-joined, with
 * key and value validation. Errors are 400 BadRequest with upstream's message.
 */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    return selectorOf(new Parser(lex(text)).parse());
  } catch (e) {
    if (e instanceof ParseError) throw newBadRequest(e.message);
    throw e;
  }
}

const matchOperators: Readonly<Record<string, LabelSelectorOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * labelSelectorFromMatch converts a metav1.LabelSelector (LabelSelectorAsSelector):
 * absent selects nothing, empty selects everything. An invalid one throws a 400
 * BadRequest carrying upstream's message.
 */
export function labelSelectorFromMatch(sel: MetaLabelSelector | null | undefined): LabelSelector {
  if (sel === null || sel === undefined) return LABEL_SELECTOR_NOTHING;
  const matchLabels = sel.matchLabels ?? {};
  const reqs: LabelRequirement[] = [];
  const fail = (errs: string[]): never => {
    throw newBadRequest(aggregate(errs));
  };
  for (const key of Object.keys(matchLabels).sort(compareUtf8)) {
    const values = [matchLabels[key] ?? ''];
    const errs = requirementErrors(key, '=', values);
    if (errs.length > 0) fail(errs);
    reqs.push({ key, operator: '=', values });
  }
  for (const expr of sel.matchExpressions ?? []) {
    const operator = Object.hasOwn(matchOperators, expr.operator) ? matchOperators[expr.operator] : undefined;
    if (operator === undefined) throw newBadRequest(`${goQuote(expr.operator)} is not a valid label selector operator`);
    // Upstream copies the values into a nil slice, so "no values" prints as null.
    const values = expr.values !== undefined && expr.values.length > 0 ? [...expr.values] : null;
    const errs = requirementErrors(expr.key, operator, values);
    if (errs.length > 0) fail(errs);
    reqs.push({ key: expr.key, operator, values: values ?? [] });
  }
  return selectorOf(reqs);
}
