import { parseGoDuration } from './go-duration.js';
import { parseTime } from './time.js';
import { searchWords } from './search-words.js';

/**
 * The archive's search query language, parsed here once and answered by every
 * backend the same way (docs/search.md):
 *
 *   x509 "certificate has expired" -kube-system reason:FailedMount name:checkout-db-* since:2h
 *
 * Terms are separated by white space and all must match. A word or a "quoted
 * phrase" matches the text of an event (see `searchWords`); a leading `-`
 * excludes what the term matches; `field:value` compares one field; `since:` and
 * `until:` bound the event's last time.
 */

/** MAX_QUERY_LENGTH bounds a query's characters: a query is typed, not generated, and each term costs an index lookup. */
export const MAX_QUERY_LENGTH = 1024;
/** MAX_QUERY_TERMS bounds a query's terms (time bounds included), so one request cannot ask for hundreds of index lookups. */
export const MAX_QUERY_TERMS = 32;

/**
 * MAX_PHRASE_WORDS bounds the words of one phrase (or field value): an index
 * checks a phrase's word positions in every version holding all its words, so
 * each word of a phrase of common words (`"ip ip ip …"`) costs a pass over much
 * of the archive; a message pasted whole is rarely longer.
 */
export const MAX_PHRASE_WORDS = 32;
/** MAX_QUERY_WORDS bounds the words of a query's phrases and field values together, for the same reason. */
export const MAX_QUERY_WORDS = 64;

/** SEARCH_KEYWORD_FIELDS are the fields a `field:value` term compares whole (case-insensitive, `*` suffix wildcard). */
export const SEARCH_KEYWORD_FIELDS = ['reason', 'ns', 'kind', 'name', 'node', 'controller', 'cluster'] as const;

/** SearchKeywordField is one of SEARCH_KEYWORD_FIELDS. */
export type SearchKeywordField = (typeof SEARCH_KEYWORD_FIELDS)[number];

/** SEARCH_FIELDS are the fields of an event the query language reads, in the order a hit lists the ones its terms matched. */
export const SEARCH_FIELDS = ['message', 'reason', 'type', 'kind', 'name', 'ns', 'controller', 'node', 'cluster'] as const;

/** SearchField is one of SEARCH_FIELDS. */
export type SearchField = (typeof SEARCH_FIELDS)[number];

/** SEARCH_TEXT_FIELDS are the fields a word or phrase is looked for in, in the order a hit lists them. */
export const SEARCH_TEXT_FIELDS = ['message', 'reason', 'kind', 'name', 'ns', 'controller', 'node'] as const;

/** SearchTextField is one of SEARCH_TEXT_FIELDS. */
export type SearchTextField = (typeof SEARCH_TEXT_FIELDS)[number];

/** TextTerm is a word or phrase: its words (see `searchWords`), which must follow each other in one field. */
export interface TextTerm {
  kind: 'text';
  words: string[];
  negated: boolean;
  /** position is where the term starts in the query: its first character is 1. */
  position: number;
}

/** FieldTerm compares one field, lowercased, with `value` (lowercased): equal, or starting with it when `prefix`. */
export interface FieldTerm {
  kind: 'field';
  field: SearchKeywordField | 'type';
  value: string;
  prefix: boolean;
  negated: boolean;
  position: number;
}

/** SearchTerm is one term of a query. */
export type SearchTerm = TextTerm | FieldTerm;

/** SearchQuery is a parsed query: its terms (all must hold) and the window of the event's last time, Unix ms. */
export interface SearchQuery {
  terms: SearchTerm[];
  /** sinceMs (inclusive) and untilMs (exclusive) bound when the event last happened (`eventLastMs`). */
  sinceMs?: number;
  untilMs?: number;
}

/**
 * SearchQueryError is a query that does not parse. `position` is the character
 * (the first is 1) where the problem is; the message names it.
 */
export class SearchQueryError extends Error {
  readonly position: number;

  constructor(detail: string, position: number) {
    super(`invalid search query at position ${position}: ${detail}`);
    this.name = 'SearchQueryError';
    this.position = position;
  }
}

/** isSearchQueryError tells whether a value is a SearchQueryError (by shape). */
export function isSearchQueryError(e: unknown): e is SearchQueryError {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'SearchQueryError' && typeof (e as { position?: unknown }).position === 'number';
}

/** ParseSearchOptions carry what a query is read against. */
export interface ParseSearchOptions {
  /** nowMs is the instant a duration (`since:2h`) counts back from, Unix ms. */
  nowMs: number;
}

/** Token is one white-space-separated term as written: its text with quotes resolved, and where it starts (UTF-16 index). */
interface Token {
  negated: boolean;
  /** field is the text before a top-level `:`, when there is one. */
  field?: string;
  value: string;
  quoted: boolean;
  start: number;
  /** valueStart is where the value starts (UTF-16 index), for errors about it. */
  valueStart: number;
}

const SPACE = /\s/u;
const FIELD_NAME = /^[A-Za-z]+$/;
const TIME_FIELDS = new Set(['since', 'until']);
const KEYWORD_FIELDS: ReadonlySet<string> = new Set(SEARCH_KEYWORD_FIELDS);
const KNOWN_FIELDS = [...SEARCH_KEYWORD_FIELDS, 'type', 'since', 'until'].join(', ');

/**
 * RFC3339 is the shape a time bound takes when it is not a duration: parseTime
 * reads it exactly; this only tells the two forms apart.
 */
const RFC3339_START = /^\d{4}-\d{2}-\d{2}T/;

/** parseSearchQuery reads a query; it throws a SearchQueryError naming the position of the first problem. */
export function parseSearchQuery(text: string, options: ParseSearchOptions): SearchQuery {
  if (text.length > MAX_QUERY_LENGTH) throw new SearchQueryError(`the query is longer than ${MAX_QUERY_LENGTH} characters`, column(text, MAX_QUERY_LENGTH));
  const query: SearchQuery = { terms: [] };
  const tokens = tokenize(text);
  if (tokens.length > MAX_QUERY_TERMS) throw new SearchQueryError(`more than ${MAX_QUERY_TERMS} terms`, column(text, tokens[MAX_QUERY_TERMS]!.start));
  let words = 0;
  for (const t of tokens) {
    if (t.field === undefined || !TIME_FIELDS.has(t.field.toLowerCase())) {
      const n = searchWords(t.value).length;
      if (n > MAX_PHRASE_WORDS) throw new SearchQueryError(`a phrase or value of ${n} words is more than ${MAX_PHRASE_WORDS}; search for fewer of its words`, column(text, t.start));
      words += n;
      if (words > MAX_QUERY_WORDS) throw new SearchQueryError(`more than ${MAX_QUERY_WORDS} words in the query's phrases and values`, column(text, t.start));
    }
    const at = column(text, t.start);
    const valueAt = column(text, t.valueStart);
    if (t.field === undefined) {
      query.terms.push(textTerm(t, at, valueAt));
      continue;
    }
    const field = t.field.toLowerCase();
    if (TIME_FIELDS.has(field)) {
      if (t.negated) throw new SearchQueryError(`${field}: cannot be excluded; use since: and until: to bound the window`, at);
      const key = field === 'since' ? 'sinceMs' : 'untilMs';
      if (query[key] !== undefined) throw new SearchQueryError(`${field}: is given twice`, at);
      query[key] = timeValue(t, field, options.nowMs, valueAt);
      continue;
    }
    if (field !== 'type' && !KEYWORD_FIELDS.has(field)) {
      throw new SearchQueryError(`unknown field ${JSON.stringify(t.field)} (known: ${KNOWN_FIELDS}); put the term in quotes to search for it as text`, at);
    }
    query.terms.push(fieldTerm(t, field as FieldTerm['field'], at, valueAt));
  }
  if (query.sinceMs !== undefined && query.untilMs !== undefined && query.untilMs <= query.sinceMs) {
    throw new SearchQueryError('until: must be after since:', column(text, tokens.find((t) => t.field?.toLowerCase() === 'until')!.start));
  }
  return query;
}

/** column turns a UTF-16 index into the position a person counts: characters (code points) from 1. */
function column(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++;
    n++;
  }
  return n;
}

function textTerm(t: Token, at: number, valueAt: number): TextTerm {
  if (!t.quoted && t.value.includes('*')) {
    throw new SearchQueryError('a wildcard (*) is allowed only at the end of a field value such as name:web-*; put the term in quotes to search for it as text', valueAt + [...t.value.slice(0, t.value.indexOf('*'))].length);
  }
  const words = searchWords(t.value);
  if (words.length === 0) {
    throw new SearchQueryError(t.quoted ? 'the phrase has no letters or digits to search for' : `${JSON.stringify(t.value)} has no letters or digits to search for`, at);
  }
  return { kind: 'text', words, negated: t.negated, position: at };
}

function fieldTerm(t: Token, field: FieldTerm['field'], at: number, valueAt: number): FieldTerm {
  let value = t.value;
  let prefix = false;
  if (!t.quoted && value.endsWith('*')) {
    if (field === 'type') throw new SearchQueryError('type: takes Normal or Warning, with no wildcard', valueAt);
    value = value.slice(0, -1);
    prefix = true;
    if (value === '') throw new SearchQueryError(`${field}: a wildcard needs some text before the *`, valueAt);
  }
  if (!t.quoted && value.includes('*')) {
    throw new SearchQueryError('a wildcard (*) is allowed only at the end of the value', valueAt + [...value.slice(0, value.indexOf('*'))].length);
  }
  if (value === '') throw new SearchQueryError(`${field}: needs a value`, valueAt);
  value = value.toLowerCase();
  if (field === 'type' && value !== 'normal' && value !== 'warning') {
    throw new SearchQueryError(`type: takes Normal or Warning, not ${JSON.stringify(t.value)}`, valueAt);
  }
  return { kind: 'field', field, value, prefix, negated: t.negated, position: at };
}

/** timeValue reads a bound: an RFC 3339 time, or a duration back from now as the timeline's --since takes it (`2h`, `7d`). */
function timeValue(t: Token, field: string, nowMs: number, valueAt: number): number {
  if (t.value === '') throw new SearchQueryError(`${field}: needs a time (RFC 3339 such as 2025-01-31T14:00:00Z) or a duration back from now (such as 2h or 7d)`, valueAt);
  if (RFC3339_START.test(t.value)) {
    try {
      return parseTime(t.value);
    } catch {
      throw new SearchQueryError(`${field}: ${JSON.stringify(t.value)} is not an RFC 3339 time such as 2025-01-31T14:00:00Z`, valueAt);
    }
  }
  let ms: number;
  try {
    ms = parseGoDuration(t.value);
  } catch {
    throw new SearchQueryError(`${field}: ${JSON.stringify(t.value)} is neither an RFC 3339 time nor a duration such as 30m, 2h or 7d`, valueAt);
  }
  if (!(ms > 0) || !Number.isFinite(ms)) throw new SearchQueryError(`${field}: the duration must be positive, such as 30m, 2h or 7d`, valueAt);
  return nowMs - ms;
}

/**
 * tokenize splits a query into terms: runs of non-space characters, where a
 * double quote starts a quoted part running to the next double quote (white
 * space inside kept; `\"` and `\\` escape). A term is `-` (exclude), then either
 * a quoted phrase, or `name:` followed by a value (plain or quoted), or a word.
 */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    if (SPACE.test(text[i]!)) {
      i++;
      continue;
    }
    const start = i;
    let negated = false;
    if (text[i] === '-') {
      negated = true;
      i++;
      if (i >= n || SPACE.test(text[i]!)) throw new SearchQueryError('nothing to exclude after -', column(text, start));
      if (text[i] === '-') throw new SearchQueryError('one - is enough to exclude a term', column(text, i));
    }
    let field: string | undefined;
    if (text[i] !== '"') {
      const colon = text.indexOf(':', i);
      const end = termEnd(text, i);
      if (colon >= 0 && colon < end && FIELD_NAME.test(text.slice(i, colon))) {
        field = text.slice(i, colon);
        i = colon + 1;
      }
    }
    const valueStart = i;
    if (text[i] === '"') {
      const { value, next } = quoted(text, i);
      i = next;
      if (i < n && !SPACE.test(text[i]!)) throw new SearchQueryError('a closing quote must be followed by a space', column(text, i));
      tokens.push({ negated, ...(field !== undefined ? { field } : {}), value, quoted: true, start, valueStart });
      continue;
    }
    const end = termEnd(text, i);
    if (end < n && text[end] === '"') throw new SearchQueryError('a quote must start a term or a field value', column(text, end));
    tokens.push({ negated, ...(field !== undefined ? { field } : {}), value: text.slice(i, end), quoted: false, start, valueStart });
    i = end;
  }
  return tokens;
}

/** termEnd is where an unquoted run starting at `i` ends: at white space, a quote, or the end. */
function termEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length && text[j] !== '"' && !SPACE.test(text[j]!)) j++;
  return j;
}

/** quoted reads a quoted part starting at the quote at `i`. */
function quoted(text: string, i: number): { value: string; next: number } {
  let value = '';
  let j = i + 1;
  while (j < text.length) {
    const c = text[j]!;
    if (c === '"') return { value, next: j + 1 };
    if (c === '\\' && (text[j + 1] === '"' || text[j + 1] === '\\')) {
      value += text[j + 1];
      j += 2;
      continue;
    }
    value += c;
    j++;
  }
  throw new SearchQueryError('the quote is never closed', column(text, i));
}
