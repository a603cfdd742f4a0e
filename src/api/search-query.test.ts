import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_PHRASE_WORDS, MAX_QUERY_LENGTH, MAX_QUERY_TERMS, MAX_QUERY_WORDS, isSearchQueryError, parseSearchQuery } from './search-query.js';
import type { SearchQuery } from './search-query.js';

const NOW = Date.UTC(2025, 5, 1, 12);
const HOUR = 3_600_000;

function parse(q: string): SearchQuery {
  return parseSearchQuery(q, { nowMs: NOW });
}

/** brief writes a query's terms one per string: `text:a b`, `-text:a`, `field:name=web*`. */
function brief(q: SearchQuery): string[] {
  const out = q.terms.map((t) =>
    t.kind === 'text'
      ? `${t.negated ? '-' : ''}text:${t.words.join(' ')}@${t.position}`
      : `${t.negated ? '-' : ''}${t.field}=${t.value}${t.prefix ? '*' : ''}@${t.position}`,
  );
  if (q.sinceMs !== undefined) out.push(`since=${new Date(q.sinceMs).toISOString()}`);
  if (q.untilMs !== undefined) out.push(`until=${new Date(q.untilMs).toISOString()}`);
  return out;
}

void describe('parseSearchQuery', () => {
  const valid: [string, string, string[]][] = [
    ['empty query: every event', '', []],
    ['only white space', ' \t\n ', []],
    ['one word, lowercased', 'FailedMount', ['text:failedmount@1']],
    ['words are all required, each its own term', 'pull  image', ['text:pull@1', 'text:image@7']],
    ['a word with punctuation is a phrase of its words', 'checkout-db-0', ['text:checkout db 0@1']],
    ['a quoted phrase', '"x509: certificate has expired"', ['text:x509 certificate has expired@1']],
    ['a phrase keeps its words in order', '"Back-off restarting"', ['text:back off restarting@1']],
    ['escaped quote and backslash inside a phrase', '"say \\"hi\\" \\\\ there"', ['text:say hi there@1']],
    ['a digit-led word with a colon is text, not a field', 'x509:', ['text:x509@1']],
    ['exclusion of a word', '-kube-system', ['-text:kube system@1']],
    ['exclusion of a phrase', '-"liveness probe"', ['-text:liveness probe@1']],
    ['unicode words', 'Fehlgeschlagen Überprüfung 日本', ['text:fehlgeschlagen@1', 'text:überprüfung@16', 'text:日本@28']],
    ['position counts characters, not UTF-16 units', '😀x y', ['text:x@1', 'text:y@4']],
    ['reason: compares the whole value, lowercased', 'reason:FailedMount', ['reason=failedmount@1']],
    ['type: Normal or Warning in any case', 'type:WARNING', ['type=warning@1']],
    ['ns:', 'ns:kube-system', ['ns=kube-system@1']],
    ['kind:', 'kind:Pod', ['kind=pod@1']],
    ['name: with a suffix wildcard', 'name:checkout-db-*', ['name=checkout-db-*@1']],
    ['node:', 'node:worker-3', ['node=worker-3@1']],
    ['controller:', 'controller:default-scheduler', ['controller=default-scheduler@1']],
    ['cluster:', 'cluster:prod-eu', ['cluster=prod-eu@1']],
    ['field names in any case', 'Reason:BackOff NAME:web*', ['reason=backoff@1', 'name=web*@16']],
    ['a quoted field value is literal (no wildcard)', 'name:"web*"', ['name=web*@1']],
    ['a quoted field value may hold spaces', 'reason:"Failed Mount"', ['reason=failed mount@1']],
    ['a field value may hold a colon', 'name:a:b', ['name=a:b@1']],
    ['excluded field', '-ns:kube-system', ['-ns=kube-system@1']],
    ['since: as a duration back from now', 'since:2h', [`since=${new Date(NOW - 2 * HOUR).toISOString()}`]],
    ['since: in days', 'since:7d', [`since=${new Date(NOW - 7 * 24 * HOUR).toISOString()}`]],
    ['since: and until: as RFC 3339', 'since:2025-05-31T03:00:00Z until:2025-05-31T04:00:00+00:00', ['since=2025-05-31T03:00:00.000Z', 'until=2025-05-31T04:00:00.000Z']],
    ['until: as a duration back from now', 'until:30m', [`until=${new Date(NOW - 30 * 60_000).toISOString()}`]],
    [
      'everything at once',
      'x509 "certificate has expired" -kube-system reason:FailedMount name:web-* since:1h',
      ['text:x509@1', 'text:certificate has expired@6', '-text:kube system@32', 'reason=failedmount@45', 'name=web-*@64', `since=${new Date(NOW - HOUR).toISOString()}`],
    ],
  ];
  for (const [name, q, want] of valid) {
    void it(`reads ${name}: ${JSON.stringify(q)}`, () => assert.deepEqual(brief(parse(q)), want));
  }

  const invalid: [string, string, number, RegExp][] = [
    ['an unclosed quote', 'pull "image never', 6, /quote is never closed/],
    ['a lone quote', '"', 1, /quote is never closed/],
    ['an empty phrase', 'a ""', 3, /no letters or digits/],
    ['a phrase of punctuation', '"--- !!"', 1, /no letters or digits/],
    ['a word of punctuation', 'ok ...', 4, /no letters or digits/],
    ['a lone minus', 'a - b', 3, /nothing to exclude/],
    ['a minus at the end', 'a -', 3, /nothing to exclude/],
    ['a double minus', '--force', 2, /one - is enough/],
    ['text glued after a closing quote', '"a b"c', 6, /followed by a space/],
    ['a quote inside a word', 'ab"c"', 3, /quote must start a term/],
    ['an unknown field', 'pull http://example.com', 6, /unknown field "http".*quotes/],
    ['an unknown field names the known ones', 'foo:bar', 1, /known: reason, ns, kind, name, node, controller, cluster, type, since, until/],
    ['an empty field value', 'reason: x', 8, /reason: needs a value/],
    ['an empty quoted field value', 'name:""', 6, /name: needs a value/],
    ['a wildcard alone', 'name:*', 6, /needs some text before the \*/],
    ['a wildcard inside a value', 'name:we*b', 8, /only at the end/],
    ['a wildcard in a word', 'foo*', 4, /only at the end of a field value/],
    ['a wildcard on type', 'type:Warn*', 6, /no wildcard/],
    ['a bad type', 'type:Error', 6, /Normal or Warning, not "Error"/],
    ['a bad time', 'since:yesterday', 7, /neither an RFC 3339 time nor a duration/],
    ['a bad RFC 3339 time', 'until:2025-13-01T00:00:00Z', 7, /not an RFC 3339 time/],
    ['a zero duration', 'since:0', 7, /must be positive/],
    ['an empty time', 'since:', 7, /needs a time/],
    ['an excluded time bound', '-since:1h', 1, /cannot be excluded/],
    ['a bound given twice', 'since:1h since:2h', 10, /given twice/],
    ['until before since', 'since:2025-01-02T00:00:00Z until:2025-01-01T00:00:00Z', 28, /until: must be after since:/],
    ['until equal to since', 'since:1h until:1h', 10, /until: must be after since:/],
    ['position counts characters after an emoji', '😀 "x', 3, /quote is never closed/],
  ];
  for (const [name, q, position, message] of invalid) {
    void it(`refuses ${name}: ${JSON.stringify(q)}`, () => {
      assert.throws(
        () => parse(q),
        (e: unknown) => {
          assert.ok(isSearchQueryError(e), `expected a SearchQueryError, got ${String(e)}`);
          assert.equal(e.position, position);
          assert.match(e.message, new RegExp(`^invalid search query at position ${position}: `));
          assert.match(e.message, message);
          return true;
        },
      );
    });
  }

  void it(`bounds a query to ${MAX_QUERY_LENGTH} characters`, () => {
    assert.equal(parse('a'.repeat(MAX_QUERY_LENGTH)).terms.length, 1);
    assert.throws(() => parse('a'.repeat(MAX_QUERY_LENGTH + 1)), (e: unknown) => isSearchQueryError(e) && e.position === MAX_QUERY_LENGTH + 1 && /longer than 1024/.test(e.message));
  });

  void it(`bounds a query to ${MAX_QUERY_TERMS} terms, time bounds included`, () => {
    const words = Array.from({ length: MAX_QUERY_TERMS - 1 }, (_, i) => `w${i}`);
    assert.equal(parse([...words, 'since:1h'].join(' ')).terms.length, MAX_QUERY_TERMS - 1);
    const tooMany = [...words, 'since:1h', 'extra'].join(' ');
    assert.throws(() => parse(tooMany), (e: unknown) => isSearchQueryError(e) && e.position === tooMany.indexOf('extra') + 1 && /more than 32 terms/.test(e.message));
  });

  void it(`bounds a phrase or value to ${MAX_PHRASE_WORDS} words, and a query to ${MAX_QUERY_WORDS}`, () => {
    const phrase = (n: number): string => `"${Array<string>(n).fill('ip').join(' ')}"`;
    assert.deepEqual(parse(phrase(MAX_PHRASE_WORDS)).terms.map((t) => t.kind === 'text' && t.words.length), [MAX_PHRASE_WORDS]);
    const cases: [string, string, RegExp][] = [
      ['a phrase of one word repeated', `x509 ${phrase(250)}`, /position 6: a phrase or value of 250 words is more than 32/],
      ['a phrase one word too long', phrase(MAX_PHRASE_WORDS + 1), /position 1: a phrase or value of 33 words/],
      ['a word of many parts', `-${Array<string>(40).fill('a').join('-')}`, /position 1: a phrase or value of 40 words/],
      ['a field value', `name:${Array<string>(33).fill('a').join('.')}`, /position 1: a phrase or value of 33 words/],
      ['the query\'s words together', `${phrase(32)} ${phrase(32)} extra`, new RegExp(`position ${2 * phrase(32).length + 3}: more than ${MAX_QUERY_WORDS} words`)],
    ];
    for (const [name, q, message] of cases) assert.throws(() => parse(q), (e: unknown) => isSearchQueryError(e) && message.test(e.message), name);
    assert.equal(parse(`${phrase(32)} ${phrase(32)} since:1h until:30m`).terms.length, 2, 'time bounds are no words');
  });

  void it('reads hostile input without throwing anything but a SearchQueryError', () => {
    const hostile = [
      '\u0000',
      'a\u0000b',
      '\u001b[31mred\u001b[0m',
      '\u202eevil',
      '"\ud800"',
      '\ud800',
      '-"',
      '\\',
      '"\\',
      '"\\"',
      ':',
      '::::',
      '-:',
      'a:"',
      'name:"unclosed',
      '*',
      '-*',
      '"*"',
      'since:1h1h1h1h1h1h1h1h',
      'since:99999999999999999999999h',
      'until:-1h',
      '__proto__:x',
      'constructor:x',
      'toString',
      'x'.repeat(1000) + '"',
      ' '.repeat(MAX_QUERY_LENGTH),
      '- '.repeat(400),
      '"'.repeat(1000),
    ];
    for (const q of hostile) {
      try {
        parse(q);
      } catch (e) {
        assert.ok(isSearchQueryError(e), `${JSON.stringify(q)}: ${String(e)}`);
        assert.ok(e.position >= 1 && e.position <= q.length + 1, `${JSON.stringify(q)}: position ${e.position}`);
      }
    }
  });
});
