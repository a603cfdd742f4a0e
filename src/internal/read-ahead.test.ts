import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readAhead } from './read-ahead.js';

interface Page {
  n: number;
  next?: string;
}

/** source serves pages 0..count-1 chained by tokens, recording each fetch and how many were in flight at once. */
function source(count: number, failAt?: number) {
  const fetched: (string | undefined)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fetch = async (token: string | undefined): Promise<Page> => {
    fetched.push(token);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 1));
    inFlight--;
    const n = token === undefined ? 0 : Number(token);
    if (n === failAt) throw new Error(`page ${n} failed`);
    return n + 1 < count ? { n, next: String(n + 1) } : { n };
  };
  return { fetch, fetched, maxInFlight: () => maxInFlight };
}

void describe('readAhead', () => {
  void it('hands out every page in order, one fetch at a time', async () => {
    const s = source(7);
    const pages = readAhead(s.fetch, (p) => p.next, 2);
    const seen: number[] = [];
    for (let p = await pages.next(); p !== undefined; p = await pages.next()) seen.push(p.n);
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6]);
    assert.deepEqual(s.fetched, [undefined, '1', '2', '3', '4', '5', '6']);
    assert.equal(s.maxInFlight(), 1);
    assert.equal(await pages.next(), undefined);
  });

  void it('reads no more than `depth` pages ahead of a slow reader', async () => {
    const s = source(10);
    const pages = readAhead(s.fetch, (p) => p.next, 2);
    assert.equal((await pages.next())?.n, 0);
    await new Promise((r) => setTimeout(r, 50));
    // Page 0 was taken; pages 1 and 2 wait: three fetched in all.
    assert.equal(s.fetched.length, 3);
    assert.equal((await pages.next())?.n, 1);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(s.fetched.length, 4);
    pages.stop();
  });

  void it('throws a failed read after the pages before it, and fetches nothing after it', async () => {
    const s = source(10, 3);
    const pages = readAhead(s.fetch, (p) => p.next, 2);
    const seen: number[] = [];
    await assert.rejects(async () => {
      for (let p = await pages.next(); p !== undefined; p = await pages.next()) seen.push(p.n);
    }, /page 3 failed/);
    assert.deepEqual(seen, [0, 1, 2]);
    assert.equal(s.fetched.length, 4);
  });

  void it('stops fetching when stopped', async () => {
    const s = source(100);
    const pages = readAhead(s.fetch, (p) => p.next, 2);
    assert.equal((await pages.next())?.n, 0);
    pages.stop();
    await new Promise((r) => setTimeout(r, 50));
    const count = s.fetched.length;
    assert.ok(count <= 3, `fetched ${count}`);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(s.fetched.length, count);
  });
});
