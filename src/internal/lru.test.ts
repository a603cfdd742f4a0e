import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LruCache } from './lru.js';

void test('LruCache evicts the least recently used entry', () => {
  const evicted: string[] = [];
  const c = new LruCache<string, number>({ maxEntries: 3, onEvict: (k) => evicted.push(k) });
  c.set('a', 1);
  c.set('b', 2);
  c.set('c', 3);
  assert.equal(c.get('a'), 1); // a is now the newest
  c.set('d', 4); // evicts b
  assert.deepEqual(evicted, ['b']);
  assert.deepEqual([...c.keys()], ['c', 'a', 'd']);
  assert.equal(c.size, 3);
});

void test('peek and has do not refresh; set of an existing key does', () => {
  const c = new LruCache<string, number>({ maxEntries: 2 });
  c.set('a', 1);
  c.set('b', 2);
  assert.equal(c.peek('a'), 1);
  assert.equal(c.has('a'), true);
  c.set('c', 3); // a was oldest despite peek
  assert.equal(c.peek('a'), undefined);
  c.set('b', 20); // b becomes newest
  c.set('d', 4); // evicts c
  assert.deepEqual([...c.entries()], [['b', 20], ['d', 4]]);
});

void test('delete removes without calling onEvict; clear empties', () => {
  let evictions = 0;
  const c = new LruCache<number, string>({ maxEntries: 2, onEvict: () => evictions++ });
  c.set(1, 'x');
  assert.equal(c.delete(1), true);
  assert.equal(c.delete(1), false);
  assert.equal(c.get(1), undefined);
  c.set(2, 'y');
  c.clear();
  assert.equal(c.size, 0);
  assert.equal(evictions, 0);
});

void test('maxEntries below 1 is refused', () => {
  assert.throws(() => new LruCache({ maxEntries: 0 }), RangeError);
});

void test('repeated use of the newest key keeps the order right through deletes and evictions', () => {
  const c = new LruCache<string, number>({ maxEntries: 3 });
  c.set('a', 1);
  c.set('b', 2);
  c.get('b');
  c.set('b', 3);
  c.delete('b');
  c.set('c', 4);
  c.get('a');
  c.get('a');
  c.set('d', 5);
  c.set('e', 6); // evicts c, the least recently used
  assert.deepEqual([...c.entries()], [['a', 1], ['d', 5], ['e', 6]]);
  c.clear();
  c.set('x', 1);
  assert.deepEqual([...c.keys()], ['x']);
});

void test('many touches and evictions keep the order a plain recency list gives', () => {
  const evicted: number[] = [];
  const c = new LruCache<number, number>({ maxEntries: 50, onEvict: (k) => evicted.push(k) });
  let model: number[] = [];
  const expectedEvicted: number[] = [];
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % 120;
  for (let i = 0; i < 5000; i++) {
    const k = next();
    const op = i % 3;
    if (op === 0) {
      const v = c.get(k);
      assert.equal(v === undefined, !model.includes(k));
      if (v !== undefined) model = [...model.filter((m) => m !== k), k];
    } else if (op === 1) {
      c.set(k, i);
      model = [...model.filter((m) => m !== k), k];
      while (model.length > 50) expectedEvicted.push(model.shift()!);
    } else {
      assert.equal(c.delete(k), model.includes(k));
      model = model.filter((m) => m !== k);
    }
  }
  assert.deepEqual([...c.keys()], model);
  assert.deepEqual(evicted, expectedEvicted);
});

void test('an entry may be deleted while the entries are walked', () => {
  const c = new LruCache<string, number>({ maxEntries: 5 });
  for (const k of ['a', 'b', 'c', 'd']) c.set(k, 1);
  for (const [k] of c.entries()) if (k !== 'c') c.delete(k);
  assert.deepEqual([...c.keys()], ['c']);
});

void test('maxWeight bounds the sum of weigh: the oldest go first, a re-set entry is weighed again, a value heavier than the bound is not kept', () => {
  const evicted: string[] = [];
  const c = new LruCache<string, string>({ maxEntries: Infinity, maxWeight: 10, weigh: (v) => v.length, onEvict: (k) => evicted.push(k) });
  c.set('a', 'xxxx');
  c.set('b', 'xxxx');
  assert.equal(c.weight, 8);
  c.get('a');
  c.set('c', 'xxx');
  assert.deepEqual([...c.keys()], ['a', 'c'], 'b, the least recently used, went first');
  assert.equal(c.weight, 7);
  c.set('a', 'x');
  assert.equal(c.weight, 4, 'a re-set entry counts its new weight');
  c.set('c', 'x'.repeat(10));
  assert.deepEqual([...c.keys()], ['c'], 'growing an entry evicts the others');
  assert.equal(c.weight, 10);
  c.set('d', 'x'.repeat(11));
  assert.deepEqual([...c.keys()], [], 'too heavy to keep: it evicts all, itself last');
  assert.equal(c.weight, 0);
  assert.deepEqual(evicted, ['b', 'a', 'c', 'd']);
  c.set('e', 'xx');
  c.clear();
  assert.equal(c.weight, 0);
});
