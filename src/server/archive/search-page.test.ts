import { parseSearchQuery } from '../../api/index.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareSearchOrder } from '../../storage/index.js';
import type { SearchCursor, SearchPage, SearchRequest } from '../../storage/index.js';
import { searchPage } from './search-page.js';

/**
 * FakeIndex is an index whose candidates are `total` events a second apart,
 * every `every`-th one a hit; a read examines at most `maxExamined` candidates
 * past the request's position, as SQLite's does, and counts what it examined.
 */
class FakeIndex {
  examined = 0;
  reads = 0;
  histograms = 0;

  constructor(
    private readonly total: number,
    private readonly every: number,
  ) {}

  search(request: SearchRequest): Promise<SearchPage> {
    this.reads++;
    if (request.histogram !== undefined) this.histograms++;
    const hits: { at: SearchCursor; name: string }[] = [];
    let last: SearchCursor | undefined;
    let examined = 0;
    let short = false;
    for (let i = 0; i < this.total && hits.length <= request.limit; i++) {
      const at = { timeMs: 1_000_000 - i * 1000, key: `ns/e${i}` };
      if (request.after !== undefined && compareSearchOrder(at, request.after) <= 0) continue;
      if (examined >= (request.maxExamined ?? Infinity)) {
        short = true;
        break;
      }
      examined++;
      this.examined++;
      last = at;
      if (i % this.every === 0) hits.push({ at, name: `e${i}` });
    }
    const items = hits.slice(0, request.limit);
    const page: SearchPage = { items: items.map((h) => ({ event: { metadata: { namespace: 'ns', name: h.name }, involvedObject: {} }, matched: [] })), resourceVersion: 7 };
    if (hits.length > request.limit) page.next = items[items.length - 1]!.at;
    else if (short) page.next = last!;
    return Promise.resolve(page);
  }
}

const request = (limit: number): SearchRequest => ({ query: parseSearchQuery('', { nowMs: 0 }), limit });
const names = (page: SearchPage): string[] => page.items.map((h) => h.event.metadata.name!);

void describe('searchPage', () => {
  void it('reads a page in chunks, letting the event loop go between them', async () => {
    const index = new FakeIndex(1000, 50);
    let done = false;
    let ranBetween = false;
    setImmediate(() => (ranBetween = !done));
    const page = await searchPage(index, request(5), { chunk: 20, maxExamined: 10_000 });
    done = true;
    assert.deepEqual(names(page), ['e0', 'e50', 'e100', 'e150', 'e200']);
    assert.deepEqual(page.next, { timeMs: 1_000_000 - 219_000, key: 'ns/e219' }, 'past the last candidate examined');
    assert.ok(index.reads > 1, 'several reads');
    assert.ok(ranBetween, 'another task ran between two reads');
  });

  void it('examines at most maxExamined candidates and ends short with a position to continue from', async () => {
    const index = new FakeIndex(1000, 400);
    const page = await searchPage(index, request(5), { chunk: 20, maxExamined: 100 });
    assert.deepEqual(names(page), ['e0']);
    assert.equal(index.examined, 100);
    assert.deepEqual(page.next, { timeMs: 1_000_000 - 99_000, key: 'ns/e99' });
    const rest: string[] = [];
    let next: SearchCursor | undefined = page.next;
    for (let pages = 0; next !== undefined; pages++) {
      assert.ok(pages < 20);
      const more = await searchPage(index, { ...request(5), after: next }, { chunk: 20, maxExamined: 100 });
      rest.push(...names(more));
      next = more.next;
    }
    assert.deepEqual(rest, ['e400', 'e800']);
  });

  void it('asks the first read alone for the histogram', async () => {
    const index = new FakeIndex(100, 30);
    await searchPage(index, { ...request(5), histogram: { sinceMs: 0, untilMs: 2_000_000, bucketMs: 1_000_000 } }, { chunk: 10 });
    assert.ok(index.reads > 1);
    assert.equal(index.histograms, 1);
  });
});
