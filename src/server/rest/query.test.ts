import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SELECTOR_BYTES, MAX_SELECTOR_TERMS, parseListQuery } from './query.js';

const status = (f: () => unknown): { code?: number; message?: string } | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as { status?: { code?: number; message?: string } }).status;
  }
};

describe('parseListQuery caps selectors', () => {
  const terms = (n: number): string => Array.from({ length: n }, (_, i) => `k${i}!=v`).join(',');
  const cases: [string, string, string, RegExp | undefined][] = [
    ['labelSelector', 'app=web,tier in (a,b)', 'an ordinary selector', undefined],
    ['labelSelector', terms(MAX_SELECTOR_TERMS), 'as many terms as allowed', undefined],
    ['labelSelector', terms(MAX_SELECTOR_TERMS + 1), 'one term too many', /^labelSelector: Too many terms: must have at most 256 comma-separated requirements and values, not 257$/],
    ['labelSelector', `app in (${Array.from({ length: 300 }, (_, i) => `v${i}`).join(',')})`, 'a set of 300 values', /Too many terms/],
    ['fieldSelector', terms(MAX_SELECTOR_TERMS + 1).replace(/k(\d+)/g, 'reason'), 'a field selector too', /^fieldSelector: Too many terms/],
    ['labelSelector', `app=${'x'.repeat(MAX_SELECTOR_BYTES)}`, 'a selector past the byte cap', /^labelSelector: Too long: must have at most 32768 bytes, not 32772$/],
  ];
  for (const [name, value, what, want] of cases) {
    it(what, () => {
      const got = status(() => parseListQuery(new URLSearchParams({ [name]: value })));
      if (want === undefined) return assert.equal(got, undefined);
      assert.equal(got?.code, 400);
      assert.match(got?.message ?? '', want);
    });
  }
});
