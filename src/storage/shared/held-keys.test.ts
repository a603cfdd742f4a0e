import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageOfHeld } from './held-keys.js';

void describe('pageOfHeld', () => {
  const keys = ['a/1', 'a/2', 'b/1', 'c/9'].map((key, rv) => ({ rv, key }));
  for (const [start, limit, page, last] of [
    ['', 2, ['a/1', 'a/2'], false],
    ['a/2', 2, ['b/1', 'c/9'], true],
    ['a/1', 10, ['a/2', 'b/1', 'c/9'], true],
    ['a/15', 1, ['a/2'], false],
    ['c/9', 5, [], true],
    ['z', 5, [], true],
  ] as const) {
    void it(`from ${JSON.stringify(start)}, ${limit}: the keys after the start, and whether they are the last`, () => {
      const got = pageOfHeld(keys, start, limit);
      assert.deepEqual(got.page.map((k) => k.key), page);
      assert.equal(got.last, last);
    });
  }
  void it('holds nothing: an empty last page', () => {
    assert.deepEqual(pageOfHeld([], '', 3), { page: [], last: true });
  });
});
