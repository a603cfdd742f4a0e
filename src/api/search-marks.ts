import { fieldTermMatches } from './search-text.js';
import { SEARCH_TEXT_FIELDS } from './search-query.js';
import type { SearchField, SearchQuery } from './search-query.js';

/** MarkSpan is a part of a text that a query matched: UTF-16 indexes, `start` inclusive, `end` exclusive. */
export interface MarkSpan {
  start: number;
  end: number;
}

/** WORD is `searchWords`'s word (letters, digits and marks), found on the text as written so that indexes stay its own. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * searchTextMarks finds where a query's words and phrases (not the excluded
 * ones) occur in the text of one text field: each run of the text's words equal
 * to a term's words, from the first word's start to the last word's end (a
 * phrase's separators between its words included). The spans are sorted and
 * merged; they cover only the text's own words and what lies between a
 * phrase's words, so a printer that escapes each part apart never marks inside
 * an escape.
 */
export function searchTextMarks(text: string, query: SearchQuery): MarkSpan[] {
  const terms = query.terms.flatMap((t) => (t.kind === 'text' && !t.negated ? [t.words] : []));
  if (terms.length === 0 || text === '') return [];
  const words: { word: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(WORD)) words.push({ word: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length });
  const spans: MarkSpan[] = [];
  for (const want of terms) {
    outer: for (let i = 0; i + want.length <= words.length; i++) {
      for (let j = 0; j < want.length; j++) if (words[i + j]!.word !== want[j]) continue outer;
      spans.push({ start: words[i]!.start, end: words[i + want.length - 1]!.end });
    }
  }
  return mergeSpans(spans);
}

/**
 * searchFieldMarked tells whether a field term of the query (not an excluded
 * one) matches the field's value: what a printer marks whole in that field's
 * column (`name:checkout-db-*` marks the name `checkout-db-0`).
 */
export function searchFieldMarked(query: SearchQuery, field: SearchField, value: string): boolean {
  return value !== '' && query.terms.some((t) => t.kind === 'field' && !t.negated && t.field === field && fieldTermMatches(t, value));
}

/** searchMarks is what a printer marks in one field's value: the whole value when a field term matched it, else its words and phrases (in a text field). */
export function searchMarks(query: SearchQuery, field: SearchField, value: string): MarkSpan[] {
  if (searchFieldMarked(query, field, value)) return [{ start: 0, end: value.length }];
  return TEXT_FIELDS.has(field) ? searchTextMarks(value, query) : [];
}

const TEXT_FIELDS: ReadonlySet<string> = new Set(SEARCH_TEXT_FIELDS);

function mergeSpans(spans: MarkSpan[]): MarkSpan[] {
  spans.sort((a, b) => a.start - b.start || a.end - b.end);
  const out: MarkSpan[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last !== undefined && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}
