import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSearchQuery } from './search-query.js';
import { searchMarks, searchTextMarks } from './search-marks.js';
import type { SearchField } from './search-query.js';

/** shown writes a text with its marked spans in brackets. */
function shown(text: string, spans: { start: number; end: number }[]): string {
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += `${text.slice(at, s.start)}[${text.slice(s.start, s.end)}]`;
    at = s.end;
  }
  return out + text.slice(at);
}

void describe('searchTextMarks', () => {
  // [query, text, the text with its marks]
  const cases: [string, string, string][] = [
    ['certs', 'secret "certs" not found; CERTS again', 'secret "[certs]" not found; [CERTS] again'],
    ['cert', 'certs certificate', 'certs certificate'],
    ['"back off"', 'Back-off restarting; back then off', '[Back-off] restarting; back then off'],
    ['checkout-db', 'pod checkout-db-0 and checkout db', 'pod [checkout-db]-0 and [checkout db]'],
    ['a b', 'a b a', '[a] [b] [a]'],
    ['"a b" "b c"', 'a b c', '[a b c]'],
    ['-certs volume', 'volume certs', '[volume] certs'],
    ['reason:certs', 'certs', 'certs'],
    ['überprüfung', 'ÜBERPRÜFUNG fehlgeschlagen', '[ÜBERPRÜFUNG] fehlgeschlagen'],
    ['evil', '\u202eevil\u001b[31mred', '\u202e[evil]\u001b[31mred'],
    ['', 'anything', 'anything'],
  ];
  for (const [q, text, want] of cases) {
    void it(`${JSON.stringify(q)} in ${JSON.stringify(text)}`, () => assert.equal(shown(text, searchTextMarks(text, parseSearchQuery(q, { nowMs: 0 }))), want));
  }
});

void describe('searchMarks', () => {
  const cases: [string, SearchField, string, string][] = [
    ['name:checkout-db-*', 'name', 'checkout-db-0', '[checkout-db-0]'],
    ['name:checkout-db-*', 'name', 'web-1', 'web-1'],
    ['-name:web-*', 'name', 'web-1', 'web-1'],
    ['reason:failedmount', 'reason', 'FailedMount', '[FailedMount]'],
    ['type:warning', 'type', 'Warning', '[Warning]'],
    ['warning', 'type', 'Warning', 'Warning'],
    ['cluster:prod-*', 'cluster', 'prod-eu', '[prod-eu]'],
    ['db', 'name', 'checkout-db-0', 'checkout-[db]-0'],
  ];
  for (const [q, field, value, want] of cases) {
    void it(`${q} on ${field} ${value}`, () => assert.equal(shown(value, searchMarks(parseSearchQuery(q, { nowMs: 0 }), field, value)), want));
  }
});
