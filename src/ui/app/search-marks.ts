/**
 * What the Search view marks in a hit's message: the words and phrases of the
 * search box's query, as the server's query language reads them (docs/search.md;
 * src/storage/search/search-marks.ts marks the CLI's table, and test/ui-logic
 * checks the two agree). The UI talks to the server over HTTP only, so it reads
 * the box's text itself: only the terms that mark text, never a field term or an
 * excluded one.
 */

/** WORD is the query language's word: a run of letters, digits and marks. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const SPACE = /\s/u;
const FIELD_NAME = /^[A-Za-z]+$/;

function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/**
 * markTerms reads the words of each word or phrase a query looks for (`certs`,
 * `"back off"`, `checkout-db`), leaving out excluded terms and `field:value`
 * terms. A query the server would refuse (an unclosed quote) marks nothing.
 */
export function markTerms(q: string): string[][] {
  const terms: string[][] = [];
  let i = 0;
  const n = q.length;
  while (i < n) {
    if (SPACE.test(q[i]!)) {
      i++;
      continue;
    }
    const negated = q[i] === '-';
    if (negated) i++;
    let field = false;
    if (q[i] !== '"') {
      const colon = q.indexOf(':', i);
      const end = termEnd(q, i);
      if (colon >= 0 && colon < end && FIELD_NAME.test(q.slice(i, colon))) {
        field = true;
        i = colon + 1;
      }
    }
    let value = '';
    if (q[i] === '"') {
      let j = i + 1;
      for (;;) {
        if (j >= n) return [];
        const c = q[j]!;
        if (c === '"') break;
        if (c === '\\' && (q[j + 1] === '"' || q[j + 1] === '\\')) {
          value += q[j + 1];
          j += 2;
          continue;
        }
        value += c;
        j++;
      }
      i = j + 1;
    } else {
      const end = termEnd(q, i);
      value = q.slice(i, end);
      i = end;
    }
    const w = words(value);
    if (!negated && !field && w.length > 0) terms.push(w);
  }
  return terms;
}

function termEnd(q: string, i: number): number {
  let j = i;
  while (j < q.length && q[j] !== '"' && !SPACE.test(q[j]!)) j++;
  return j;
}

/** MarkedPart is a piece of a message, marked or not; the pieces joined are the message. */
export interface MarkedPart {
  text: string;
  marked: boolean;
}

/**
 * markParts splits a message into pieces, marking each run of its words equal
 * to a term's words (a phrase from its first word to its last, what lies
 * between them included). The view draws the pieces as text nodes, never as HTML.
 */
export function markParts(text: string, terms: readonly string[][]): MarkedPart[] {
  if (terms.length === 0 || text === '') return [{ text, marked: false }];
  const found = [...text.matchAll(WORD)].map((m) => ({ word: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length }));
  const spans: { start: number; end: number }[] = [];
  for (const want of terms) {
    outer: for (let i = 0; i + want.length <= found.length; i++) {
      for (let j = 0; j < want.length; j++) if (found[i + j]!.word !== want[j]) continue outer;
      spans.push({ start: found[i]!.start, end: found[i + want.length - 1]!.end });
    }
  }
  spans.sort((a, b) => a.start - b.start || a.end - b.end);
  const parts: MarkedPart[] = [];
  let at = 0;
  for (const s of spans) {
    if (s.end <= at) continue;
    const start = Math.max(s.start, at);
    if (start > at) parts.push({ text: text.slice(at, start), marked: false });
    const last = parts[parts.length - 1];
    if (last?.marked === true && start === at) last.text += text.slice(start, s.end);
    else parts.push({ text: text.slice(start, s.end), marked: true });
    at = s.end;
  }
  if (at < text.length) parts.push({ text: text.slice(at), marked: false });
  return parts;
}
