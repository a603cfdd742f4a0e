import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foldEquals } from './decode-kind.js';

/** foldedByCopy is foldEquals without its first-unit shortcut: the fold spelled out, for the shortcut to be checked against. */
function foldedByCopy(key: string, name: string): boolean {
  if (key === name) return true;
  if (key.length !== name.length) return false;
  const folded = key.replace(/\u212a/g, 'k').replace(/\u017f/g, 's');
  return folded.length === name.length && folded.toLowerCase() === name.toLowerCase() && /^[\x00-\x7f]*$/.test(folded);
}

test('foldEquals matches keys as encoding/json folds them', () => {
  const cases: [string, string, boolean][] = [
    ['apiVersion', 'apiVersion', true],
    ['APIVERSION', 'apiVersion', true],
    ['ApiVersion', 'apiVersion', true],
    ['kind', 'kind', true],
    ['KIND', 'kind', true],
    ['\u212aind', 'kind', true],
    ['\u212aIND', 'kind', true],
    ['type', 'kind', false],
    ['kinds', 'kind', false],
    ['kInd', 'kind', true],
    ['\u0130ind', 'kind', false],
    ['@ind', 'kind', false],
    ['Kin\u017f', 'kins', true],
    ['\u017fpec', 'spec', true],
    ['apiversioN', 'apiVersion', true],
    ['bpiVersion', 'apiVersion', false],
  ];
  for (const [key, name, want] of cases) assert.equal(foldEquals(key, name), want, `${JSON.stringify(key)} ~ ${name}`);
});

test('foldEquals answers as the fold spelled out, for keys of every first unit', () => {
  const units = ['a', 'A', 'k', 'K', 'i', 'I', 's', 'S', 't', '@', '`', 'K', '\u212a', '\u017f', '\u0130', '\u00e9', 'n', 'd', 'v'];
  for (const name of ['kind', 'apiVersion', 'kins']) {
    for (const first of units) {
      for (const second of units) {
        const key = `${first}${second}${name.slice(2)}`;
        assert.equal(foldEquals(key, name), foldedByCopy(key, name), `${JSON.stringify(key)} ~ ${name}`);
      }
    }
  }
});
