import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PageObjects } from './page-objects.js';

function page(n: number, missing: ReadonlySet<number> = new Set()): { objects: PageObjects; reads: number[][] } {
  const rvs = Array.from({ length: n }, (_, i) => 1000 + i * 3);
  const reads: number[][] = [];
  const objects = new PageObjects(rvs, (want) => {
    reads.push(want);
    return want.filter((rv) => !missing.has(rv)).map((rv) => ({ rv, object: Buffer.from(`object ${rv}`) }));
  });
  return { objects, reads };
}

test('PageObjects reads a cold page in growing batches, each object once', () => {
  const { objects, reads } = page(500);
  for (let i = 0; i < 500; i++) assert.equal(objects.object(i)?.toString(), `object ${1000 + i * 3}`);
  assert.deepEqual(
    reads.map((r) => r.length),
    [1, 2, 4, 8, 16, 32, 64, 128, 128, 117],
  );
  assert.equal(new Set(reads.flat()).size, 500, 'no row read twice');
});

test('PageObjects reads the odd miss of a warm page alone', () => {
  const { objects, reads } = page(500);
  for (const i of [3, 70, 71, 300]) assert.equal(objects.object(i)?.toString(), `object ${1000 + i * 3}`);
  // 71 follows the row read for 70, so it reads two (71 and 72).
  assert.deepEqual(reads, [[1009], [1210], [1213, 1216], [1900]]);
  assert.equal(objects.object(72)?.toString(), 'object 1216', 'a row read ahead is served from what was read');
  assert.equal(reads.length, 4);
});

test('PageObjects answers undefined for a version that is gone (compacted), and reads it again if asked again', () => {
  const { objects, reads } = page(4, new Set([1003]));
  assert.equal(objects.object(0)?.toString(), 'object 1000');
  assert.equal(objects.object(1), undefined);
  assert.equal(objects.object(1), undefined);
  assert.equal(reads.length, 3);
});
