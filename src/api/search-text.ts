import { eventCluster } from './cluster.js';
import { eventLastMs } from './occurrence.js';
import type { CoreEvent } from './types.js';
import { SEARCH_FIELDS, SEARCH_TEXT_FIELDS } from './search-query.js';
import { searchWords } from './search-words.js';
import type { FieldTerm, SearchField, SearchQuery, SearchTextField, TextTerm } from './search-query.js';

/** searchFieldValue is the text of one field of an event as the search reads it ("" when absent). */
export function searchFieldValue(e: CoreEvent, field: SearchField): string {
  switch (field) {
    case 'message':
      return e.message ?? '';
    case 'reason':
      return e.reason ?? '';
    case 'type':
      return e.type ?? '';
    case 'ns':
      return e.metadata.namespace ?? '';
    case 'kind':
      return e.involvedObject.kind ?? '';
    case 'name':
      return e.involvedObject.name ?? '';
    // The printers' Source cell falls back the same way: core/v1 writers set source, events.k8s.io ones the reporting fields.
    case 'controller':
      return e.reportingComponent || e.source?.component || '';
    case 'node':
      return e.source?.host || e.reportingInstance || '';
    case 'cluster':
      return eventCluster(e);
  }
}

/** NO_TIME_MS is the last time a search gives an event with none: before every window, last in every result. */
export const NO_TIME_MS = -8.64e15;

/** searchTimeMs is the time a search orders and windows an event by: when it last happened (`eventLastMs`). */
export function searchTimeMs(e: CoreEvent): number {
  return eventLastMs(e) ?? NO_TIME_MS;
}

/** containsRun tells whether `words` occur one after another in `haystack`. */
function containsRun(haystack: readonly string[], words: readonly string[]): boolean {
  outer: for (let i = 0; i + words.length <= haystack.length; i++) {
    for (let j = 0; j < words.length; j++) if (haystack[i + j] !== words[j]) continue outer;
    return true;
  }
  return false;
}

/** fieldTermMatches tells whether a field term's value matches a field's value (whole or, with `*`, its start; case-insensitive). */
export function fieldTermMatches(t: FieldTerm, value: string): boolean {
  const v = value.toLowerCase();
  return t.prefix ? v.startsWith(t.value) : v === t.value;
}

/**
 * SearchMatcher tests events against one query. It is the definition every
 * backend's answer is checked by: a backend's index only narrows the events
 * this is asked about.
 */
export interface SearchMatcher {
  /** matches returns the fields the query's terms matched in the event (in SEARCH_FIELDS order), or undefined when it does not match. */
  matches(e: CoreEvent): SearchField[] | undefined;
}

/** createSearchMatcher builds the matcher of a query (window included). */
export function createSearchMatcher(query: SearchQuery): SearchMatcher {
  const text = query.terms.filter((t): t is TextTerm => t.kind === 'text');
  const fields = query.terms.filter((t): t is FieldTerm => t.kind === 'field');
  return {
    matches(e) {
      if (query.sinceMs !== undefined || query.untilMs !== undefined) {
        const t = searchTimeMs(e);
        if (query.sinceMs !== undefined && t < query.sinceMs) return undefined;
        if (query.untilMs !== undefined && t >= query.untilMs) return undefined;
      }
      const matched = new Set<SearchField>();
      for (const t of fields) {
        if (fieldTermMatches(t, searchFieldValue(e, t.field)) === t.negated) return undefined;
        if (!t.negated) matched.add(t.field);
      }
      if (text.length === 0) return [...matched];
      const words = new Map<SearchTextField, string[]>();
      for (const f of SEARCH_TEXT_FIELDS) words.set(f, searchWords(searchFieldValue(e, f)));
      for (const t of text) {
        let found = false;
        for (const f of SEARCH_TEXT_FIELDS) {
          if (!containsRun(words.get(f)!, t.words)) continue;
          found = true;
          if (t.negated) return undefined;
          matched.add(f);
        }
        if (!found && !t.negated) return undefined;
      }
      return SEARCH_FIELDS.filter((f) => matched.has(f));
    },
  };
}
